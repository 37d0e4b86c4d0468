{{/* The job's name: .Values.name, or the release name. */}}
{{- define "lmeval.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/* The driver's ServiceAccount, Role and RoleBinding. */}}
{{- define "lmeval.serviceAccount" -}}
{{- .Values.serviceAccount | default (printf "%s-lmes-driver" (include "lmeval.name" .)) -}}
{{- end -}}
