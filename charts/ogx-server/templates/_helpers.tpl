{{/*
The server's name: .Values.name, or the release name.
*/}}
{{- define "ogx.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/*
A child object's name: the server's name plus a suffix, kept within 63
characters (a DNS label) by cutting the name and adding 8 characters of its
SHA-256, so that long names stay valid and distinct.
Call with (list . "-suffix").
*/}}
{{- define "ogx.childName" -}}
{{- $root := index . 0 -}}
{{- $suffix := index . 1 -}}
{{- $name := include "ogx.name" $root -}}
{{- if le (len (printf "%s%s" $name $suffix)) 63 -}}
{{- printf "%s%s" $name $suffix -}}
{{- else -}}
{{- $keep := sub 63 (add (len $suffix) 9) | int -}}
{{- printf "%s-%s%s" (trunc $keep $name | trimSuffix "-" | trimSuffix ".") (sha256sum $name | trunc 8) $suffix -}}
{{- end -}}
{{- end -}}

{{/*
The Service's name, <name>-service. A Service name must be a DNS-1035 label
(a letter first, no dots): a name that is not one has its dots turned into
dashes, "s-" put before a leading digit, and 8 characters of its SHA-256
added (naming.ServiceName in Go computes the same).
*/}}
{{- define "ogx.serviceName" -}}
{{- $name := include "ogx.name" . -}}
{{- if regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name -}}
{{- include "ogx.childName" (list . "-service") -}}
{{- else -}}
{{- $s := replace "." "-" $name -}}
{{- if not (regexMatch "^[a-z]" $s) -}}{{- $s = printf "s-%s" $s -}}{{- end -}}
{{- printf "%s-%s-service" (trunc 46 $s | trimSuffix "-") (sha256sum $name | trunc 8) -}}
{{- end -}}
{{- end -}}

{{/* The value of the instance label: the name, kept within 63 characters. */}}
{{- define "ogx.instance" -}}
{{- include "ogx.childName" (list . "") -}}
{{- end -}}

{{/* Selector labels: as the upstream operator's, so existing Services and policies keep matching. */}}
{{- define "ogx.selectorLabels" -}}
app: ogx
app.kubernetes.io/instance: {{ include "ogx.instance" . | toJson }}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "ogx.labels" -}}
{{ include "ogx.selectorLabels" . }}
app.kubernetes.io/name: ogx
app.kubernetes.io/component: server
app.kubernetes.io/part-of: ogx
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | toJson }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The ServiceAccount the pods run as. */}}
{{- define "ogx.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "ogx.childName" (list . "-sa")) -}}
{{- end -}}

{{/* "true" when more than one pod may run (replicas or autoscaling). */}}
{{- define "ogx.multiReplica" -}}
{{- if .Values.autoscaling.maxReplicas -}}
{{- if gt (int .Values.autoscaling.maxReplicas) 1 }}true{{ end -}}
{{- else if gt (int .Values.replicas) 1 -}}
true
{{- end -}}
{{- end -}}

{{/* "true" when the API exists: values override detection. Call with (list . "key" "group/version/Kind"). */}}
{{- define "ogx.has" -}}
{{- $root := index . 0 -}}
{{- $v := index $root.Values.capabilities (index . 1) -}}
{{- if kindIs "bool" $v -}}
{{- if $v }}true{{ end -}}
{{- else if $root.Capabilities.APIVersions.Has (index . 2) -}}
true
{{- end -}}
{{- end -}}

{{- define "ogx.hasRoute" -}}{{ include "ogx.has" (list . "route" "route.openshift.io/v1/Route") }}{{- end -}}
{{- define "ogx.openshift" -}}{{ include "ogx.has" (list . "openshift" "security.openshift.io/v1/SecurityContextConstraints") }}{{- end -}}
{{- define "ogx.hasServiceMonitor" -}}{{ include "ogx.has" (list . "serviceMonitor" "monitoring.coreos.com/v1/ServiceMonitor") }}{{- end -}}
{{- define "ogx.hasPrometheusRule" -}}{{ include "ogx.has" (list . "prometheusRule" "monitoring.coreos.com/v1/PrometheusRule") }}{{- end -}}

{{/* The server configuration's ConfigMap, if any: the generated one or the user's. */}}
{{- define "ogx.configMapName" -}}
{{- if .Values.config.generated -}}
{{- .Values.config.generatedName | default (include "ogx.childName" (list . "-config")) -}}
{{- else if .Values.config.configMapName -}}
{{- .Values.config.configMapName -}}
{{- end -}}
{{- end -}}

{{/* The metrics port, when monitoring is on and it is not the server's own port. */}}
{{- define "ogx.metricsPort" -}}
{{- if .Values.monitoring.enabled -}}
{{- .Values.monitoring.metricsPort | default 9464 | int -}}
{{- end -}}
{{- end -}}

{{/*
ogx.probe is the probes' handler: GET /v1/health over http, or https when the
server serves TLS (the kubelet does not verify the certificate).
*/}}
{{- define "ogx.probe" -}}
httpGet:
  path: /v1/health
  port: http
  {{- if eq (.Values.container.serves | default "http") "https" }}
  scheme: HTTPS
  {{- end }}
{{- end -}}
