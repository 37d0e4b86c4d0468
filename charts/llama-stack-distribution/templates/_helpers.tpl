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
