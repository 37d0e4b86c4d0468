{{/* The EvalHub's name: .Values.name, or the release name. */}}
{{- define "evalhub.name" -}}
{{- .Values.name | default .Release.Name -}}
{{- end -}}

{{/* Selector labels of the server's pods, as upstream selects them. */}}
{{- define "evalhub.apiLabels" -}}
app: eval-hub
instance: {{ include "evalhub.name" . | toJson }}
component: api
{{- end -}}

{{/* Selector labels of the MCP server's pods. */}}
{{- define "evalhub.mcpLabels" -}}
app: eval-hub
instance: {{ include "evalhub.name" . | toJson }}
component: mcp
{{- end -}}

{{/* Labels of the metrics Service and ServiceMonitor. */}}
{{- define "evalhub.metricsLabels" -}}
app: eval-hub
instance: {{ include "evalhub.name" . | toJson }}
component: metrics
{{- end -}}

{{/* Labels on every object besides its component's. */}}
{{- define "evalhub.labels" -}}
app.kubernetes.io/name: eval-hub
app.kubernetes.io/instance: {{ include "evalhub.name" . | toJson }}
app.kubernetes.io/part-of: eval-hub
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | toJson }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* "true" when the API exists; a bool in .Values.capabilities overrides detection. Call with (list . "key" "group/version/Kind"). */}}
{{- define "evalhub.has" -}}
{{- $root := index . 0 -}}
{{- $v := index $root.Values.capabilities (index . 1) -}}
{{- if kindIs "bool" $v -}}
{{- if $v }}true{{ end -}}
{{- else if $root.Capabilities.APIVersions.Has (index . 2) -}}
true
{{- end -}}
{{- end -}}

{{- define "evalhub.openshift" -}}{{ include "evalhub.has" (list . "openshift" "security.openshift.io/v1/SecurityContextConstraints") }}{{- end -}}
{{- define "evalhub.hasRoute" -}}{{ include "evalhub.has" (list . "route" "route.openshift.io/v1/Route") }}{{- end -}}
{{- define "evalhub.hasCertManager" -}}{{ include "evalhub.has" (list . "certManager" "cert-manager.io/v1/Certificate") }}{{- end -}}
{{- define "evalhub.hasServiceMonitor" -}}{{ include "evalhub.has" (list . "serviceMonitor" "monitoring.coreos.com/v1/ServiceMonitor") }}{{- end -}}

{{/* Who creates the serving certificate Secrets <name>-tls and <name>-mcp-tls: openshift, cert-manager or none. */}}
{{- define "evalhub.tlsMode" -}}
{{- if .Values.tls.mode -}}
{{- .Values.tls.mode -}}
{{- else if include "evalhub.openshift" . -}}
openshift
{{- else if include "evalhub.hasCertManager" . -}}
cert-manager
{{- else -}}
none
{{- end -}}
{{- end -}}

{{/* The server's in-cluster URL (upstream's status.url and SERVICE_URL). */}}
{{- define "evalhub.url" -}}
{{- printf "https://%s.%s.svc.cluster.local:8443" (include "evalhub.name" .) .Release.Namespace -}}
{{- end -}}

{{/* The restricted security context of every container (upstream's). */}}
{{- define "evalhub.containerSecurity" -}}
allowPrivilegeEscalation: false
runAsNonRoot: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* kube-rbac-proxy's arguments in front of a local port. Call with (list . port ignorePath). */}}
{{- define "evalhub.proxyArgs" -}}
{{- $root := index . 0 -}}
- --secure-listen-address=0.0.0.0:8443
- {{ printf "--upstream=http://127.0.0.1:%d/" (index . 1 | int) }}
- --config-file=/etc/kube-rbac-proxy/auth.yaml
{{- if ne (include "evalhub.tlsMode" $root) "none" }}
- --tls-cert-file=/etc/tls/private/tls.crt
- --tls-private-key-file=/etc/tls/private/tls.key
{{- end }}
- --proxy-endpoints-port=9443
- {{ printf "--ignore-paths=%s" (index . 2) }}
- --auth-header-fields-enabled
- --auth-header-user-field-name=X-User
- --v=0
{{- end -}}
