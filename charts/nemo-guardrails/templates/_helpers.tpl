{{/* The server's name: .Values.name, or the release name. */}}
{{- define "nemo.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/* Selector labels of the pods, as upstream selects them. */}}
{{- define "nemo.selectorLabels" -}}
app: {{ include "nemo.name" . | toJson }}
{{- end -}}

{{/* The pods' labels, as upstream sets them. */}}
{{- define "nemo.podLabels" -}}
app: {{ include "nemo.name" . | toJson }}
component: {{ include "nemo.name" . | toJson }}
deploy-name: {{ include "nemo.name" . | toJson }}
app.kubernetes.io/instance: {{ include "nemo.name" . | toJson }}
app.kubernetes.io/name: {{ include "nemo.name" . | toJson }}
app.kubernetes.io/part-of: trustyai
{{- end -}}

{{/* Labels on every object. */}}
{{- define "nemo.labels" -}}
{{ include "nemo.podLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | toJson }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* "true" when the API exists; a bool in .Values.capabilities overrides detection. Call with (list . "key" "group/version/Kind"). */}}
{{- define "nemo.has" -}}
{{- $root := index . 0 -}}
{{- $v := index $root.Values.capabilities (index . 1) -}}
{{- if kindIs "bool" $v -}}
{{- if $v }}true{{ end -}}
{{- else if $root.Capabilities.APIVersions.Has (index . 2) -}}
true
{{- end -}}
{{- end -}}

{{- define "nemo.openshift" -}}{{ include "nemo.has" (list . "openshift" "security.openshift.io/v1/SecurityContextConstraints") }}{{- end -}}
{{- define "nemo.hasRoute" -}}{{ include "nemo.has" (list . "route" "route.openshift.io/v1/Route") }}{{- end -}}
{{- define "nemo.hasCertManager" -}}{{ include "nemo.has" (list . "certManager" "cert-manager.io/v1/Certificate") }}{{- end -}}

{{/* Who creates Secret <name>-tls: openshift, cert-manager or none. */}}
{{- define "nemo.tlsMode" -}}
{{- if .Values.tls.mode -}}
{{- .Values.tls.mode -}}
{{- else if include "nemo.openshift" . -}}
openshift
{{- else if include "nemo.hasCertManager" . -}}
cert-manager
{{- else -}}
none
{{- end -}}
{{- end -}}

{{/* "true" when kube-rbac-proxy serves Secret <name>-tls. */}}
{{- define "nemo.tls" -}}
{{- if and .Values.auth (ne (include "nemo.tlsMode" .) "none") }}true{{ end -}}
{{- end -}}
