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

{{/*
The Service's name. A Service name must be a DNS-1035 label (a letter first,
no dots), stricter than the CR name (a DNS subdomain): a name that is not one
has its dots turned into dashes, "s-" put before a leading digit, and 8
characters of its SHA-256 added so that the result stays distinct.
naming.ServiceName in Go computes the same (tested against this helper).
*/}}
{{- define "llsd.serviceName" -}}
{{- $name := include "llsd.name" . -}}
{{- if regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name -}}
{{- include "llsd.childName" (list . "-service") -}}
{{- else -}}
{{- $s := replace "." "-" $name -}}
{{- if not (regexMatch "^[a-z]" $s) -}}{{- $s = printf "s-%s" $s -}}{{- end -}}
{{- printf "%s-%s-service" (trunc 46 $s | trimSuffix "-") (sha256sum $name | trunc 8) -}}
{{- end -}}
{{- end -}}

{{/* The value of the instance label: the name, kept within 63 characters. */}}
{{- define "llsd.instance" -}}
{{- include "llsd.childName" (list . "") -}}
{{- end -}}

{{/* Selector labels: as the upstream operator, so existing Services and policies keep matching. */}}
{{- define "llsd.selectorLabels" -}}
app: llama-stack
app.kubernetes.io/instance: {{ include "llsd.instance" . | toJson }}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "llsd.labels" -}}
{{ include "llsd.selectorLabels" . }}
app.kubernetes.io/name: llama-stack
app.kubernetes.io/component: server
app.kubernetes.io/part-of: llama-stack-distribution
app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | toJson }}
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

{{/* "true" on OpenShift: the SCC API exists (values override detection). */}}
{{- define "llsd.openshift" -}}
{{- if kindIs "bool" .Values.capabilities.openshift -}}
{{- if .Values.capabilities.openshift }}true{{ end -}}
{{- else if .Capabilities.APIVersions.Has "security.openshift.io/v1/SecurityContextConstraints" -}}
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

{{/*
llsd.startWithConfig starts the server on /etc/llama-stack/config.yaml: the
images' own entrypoints name their built-in distribution, which wins over
LLAMA_STACK_CONFIG. The server's module moved between releases, so the
installed llama_stack's version picks the command: before 0.2.17 the
distribution module with --config, before 0.3.0 the core module with the path,
from 0.3.0 uvicorn on the app factory (which reads LLAMA_STACK_CONFIG; so still at 0.7.1) with
the port and workers, and the configuration's server.tls_keyfile,
tls_certfile and tls_cafile as `llama stack run` passes them to uvicorn
(HTTPS, and client certificates required with a CA). An unreadable version
starts the newest way.
*/}}
{{- define "llsd.startWithConfig" -}}
set -e
cfg=${LLAMA_STACK_CONFIG:-/etc/llama-stack/config.yaml}
form=$(python3 -c '
import re
from importlib.metadata import version
try:
    v = tuple(int(p) for p in re.findall(r"[0-9]+", version("llama_stack"))[:3])
except Exception:
    v = ()
print("distribution" if v and v < (0, 2, 17) else "core" if v and v < (0, 3, 0) else "uvicorn")
')
case "$form" in
  distribution) exec python3 -m llama_stack.distribution.server.server --config "$cfg" ;;
  core) exec python3 -m llama_stack.core.server.server "$cfg" ;;
  *)
    set -- --factory --host 0.0.0.0 --port "${LLAMA_STACK_PORT:-8321}" --workers "${LLAMA_STACK_WORKERS:-1}"
    tls=$(python3 -c '
import sys, yaml
with open(sys.argv[1]) as f:
    s = (yaml.safe_load(f) or {}).get("server") or {}
k, c, a = s.get("tls_keyfile"), s.get("tls_certfile"), s.get("tls_cafile")
if k and c:
    print(k); print(c); print(a or "")
' "$cfg" 2>/dev/null) || tls=""
    if [ -n "$tls" ]; then
      key=$(printf '%s\n' "$tls" | sed -n 1p)
      cert=$(printf '%s\n' "$tls" | sed -n 2p)
      ca=$(printf '%s\n' "$tls" | sed -n 3p)
      set -- "$@" --ssl-keyfile "$key" --ssl-certfile "$cert"
      if [ -n "$ca" ]; then set -- "$@" --ssl-ca-certs "$ca" --ssl-cert-reqs 2; fi
    fi
    exec uvicorn llama_stack.core.server.server:create_app "$@" ;;
esac
{{- end -}}

{{/*
llsd.probe is the probes' handler: GET /v1/health over http, or https when
the server serves TLS (the kubelet does not verify the certificate); a TCP
connect when it requires client certificates, which the kubelet cannot
present.
*/}}
{{- define "llsd.probe" -}}
{{- $serves := .Values.container.serves | default "http" -}}
{{- if eq $serves "mtls" -}}
tcpSocket:
  port: http
{{- else -}}
httpGet:
  path: /v1/health
  port: http
  {{- if eq $serves "https" }}
  scheme: HTTPS
  {{- end }}
{{- end -}}
{{- end -}}
