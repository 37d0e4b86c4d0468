{{/*
The distribution's name: .Values.name, or the release name.
*/}}
{{- define "llsd.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/*
A child object's name: the distribution's name plus a suffix, kept within 63
characters (a DNS label) by cutting the name and adding 8 characters of its
SHA-256, so that long names stay valid and distinct.
Call with (list . "-suffix").
*/}}
{{- define "llsd.childName" -}}
{{- $root := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $name := include "llsd.name" $root -}}
{{- if le (len (printf "%s%s" $name $suffix)) 63 -}}
{{- printf "%s%s" $name $suffix -}}
{{- else -}}
{{- $keep := sub 63 (add (len $suffix) 9) | int -}}
{{- printf "%s-%s%s" (trunc $keep $name | trimSuffix "-" | trimSuffix ".") (sha256sum $name | trunc 8) $suffix -}}
{{- end -}}
{{- end -}}

{{/* The value of the instance label: the name, kept within 63 characters. */}}
{{- define "llsd.instance" -}}
{{- include "llsd.childName" (list . "") -}}
{{- end -}}

{{/* Selector labels: as the upstream operator, so existing Services and policies keep matching. */}}
{{- define "llsd.selectorLabels" -}}
app: llama-stack
app.kubernetes.io/instance: {{ include "llsd.instance" . | quote }}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "llsd.labels" -}}
{{ include "llsd.selectorLabels" . }}
app.kubernetes.io/name: llama-stack
app.kubernetes.io/component: server
app.kubernetes.io/part-of: llama-stack-distribution
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The ServiceAccount the pods run as. */}}
{{- define "llsd.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- include "llsd.childName" (list . "-sa") -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* "true" when more than one pod may run (replicas or autoscaling). */}}
{{- define "llsd.multiReplica" -}}
{{- if .Values.autoscaling.maxReplicas -}}
{{- if gt (int .Values.autoscaling.maxReplicas) 1 }}true{{ end -}}
{{- else if gt (int .Values.replicas) 1 -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the Route API exists (values override detection). */}}
{{- define "llsd.hasRoute" -}}
{{- if kindIs "bool" .Values.capabilities.route -}}
{{- if .Values.capabilities.route }}true{{ end -}}
{{- else if .Capabilities.APIVersions.Has "route.openshift.io/v1/Route" -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the ServiceMonitor API exists (values override detection). */}}
{{- define "llsd.hasServiceMonitor" -}}
{{- if kindIs "bool" .Values.capabilities.serviceMonitor -}}
{{- if .Values.capabilities.serviceMonitor }}true{{ end -}}
{{- else if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" -}}
true
{{- end -}}
{{- end -}}

{{/* The run configuration's ConfigMap, if any: userConfig's or the rendered runConfig's. */}}
{{- define "llsd.configMapName" -}}
{{- if .Values.runConfig -}}
{{- include "llsd.childName" (list . "-config") -}}
{{- else if .Values.userConfig.configMapName -}}
{{- .Values.userConfig.configMapName -}}
{{- end -}}
{{- end -}}
