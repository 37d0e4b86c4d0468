{{/* The service's name: .Values.name, or the release name. */}}
{{- define "tas.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/* Selector labels, as upstream sets them (Services and smoke tests select on them). */}}
{{- define "tas.selectorLabels" -}}
app: {{ include "tas.name" . | toJson }}
app.kubernetes.io/instance: {{ include "tas.name" . | toJson }}
app.kubernetes.io/name: {{ include "tas.name" . | toJson }}
app.kubernetes.io/part-of: trustyai
{{- end -}}

{{/* Labels on every object. */}}
{{- define "tas.labels" -}}
{{ include "tas.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | toJson }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* "true" when the API exists; a bool in .Values.capabilities overrides detection. Call with (list . "key" "group/version/Kind"). */}}
{{- define "tas.has" -}}
{{- $root := index . 0 -}}
{{- $v := index $root.Values.capabilities (index . 1) -}}
{{- if kindIs "bool" $v -}}
{{- if $v }}true{{ end -}}
{{- else if $root.Capabilities.APIVersions.Has (index . 2) -}}
true
{{- end -}}
{{- end -}}

{{- define "tas.openshift" -}}{{ include "tas.has" (list . "openshift" "security.openshift.io/v1/SecurityContextConstraints") }}{{- end -}}
{{- define "tas.hasRoute" -}}{{ include "tas.has" (list . "route" "route.openshift.io/v1/Route") }}{{- end -}}
{{- define "tas.hasServiceMonitor" -}}{{ include "tas.has" (list . "serviceMonitor" "monitoring.coreos.com/v1/ServiceMonitor") }}{{- end -}}
{{- define "tas.hasCertManager" -}}{{ include "tas.has" (list . "certManager" "cert-manager.io/v1/Certificate") }}{{- end -}}

{{/* "true" when Istio's DestinationRule and VirtualService APIs (v1beta1) both exist; a bool in .Values.capabilities.istio overrides detection. */}}
{{- define "tas.hasIstio" -}}
{{- if and (include "tas.has" (list . "istio" "networking.istio.io/v1beta1/DestinationRule")) (include "tas.has" (list . "istio" "networking.istio.io/v1beta1/VirtualService")) }}true{{ end -}}
{{- end -}}

{{/* "true" when the DestinationRule <name>-internal and VirtualService
<name>-redirect are rendered: model servers with an Istio sidecar log to the
service (istio.sidecarClients), Istio's APIs exist, and the service has its
https port (443) to send them to. */}}
{{- define "tas.meshClients" -}}
{{- if and .Values.istio.sidecarClients (include "tas.hasIstio" .) (include "tas.tls" .) }}true{{ end -}}
{{- end -}}

{{/* The in-cluster host of Service <name>, as model servers address it. */}}
{{- define "tas.meshHost" -}}
{{- printf "%s.%s.svc.cluster.local" (include "tas.name" .) .Release.Namespace -}}
{{- end -}}

{{/* Who creates the serving certificates: openshift, cert-manager or none. */}}
{{- define "tas.tlsMode" -}}
{{- if .Values.tls.mode -}}
{{- .Values.tls.mode -}}
{{- else if include "tas.openshift" . -}}
openshift
{{- else if include "tas.hasCertManager" . -}}
cert-manager
{{- else -}}
none
{{- end -}}
{{- end -}}

{{/* "true" when Secrets <name>-tls and <name>-internal have a creator. */}}
{{- define "tas.tls" -}}
{{- if ne (include "tas.tlsMode" .) "none" }}true{{ end -}}
{{- end -}}

{{/* "true" when the PVC is rendered and mounted: PVC mode, or a migration. */}}
{{- define "tas.pvc" -}}
{{- if or (eq .Values.storage.format "PVC") .Values.storage.migration }}true{{ end -}}
{{- end -}}
