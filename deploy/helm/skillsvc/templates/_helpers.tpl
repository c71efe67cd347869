{{/* Chart name, cut to the 63 characters a label allows. */}}
{{- define "skillsvc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name of the release's objects: the release name, plus the chart name when the release name lacks it. */}}
{{- define "skillsvc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "skillsvc.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "skillsvc.labels" -}}
helm.sh/chart: {{ include "skillsvc.chart" . }}
{{ include "skillsvc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "skillsvc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "skillsvc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "skillsvc.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "skillsvc.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "skillsvc.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* Grace period: explicit, or the shutdown timeout plus time for the process to exit. */}}
{{- define "skillsvc.terminationGracePeriodSeconds" -}}
{{- $shutdown := int .Values.shutdownTimeoutSeconds }}
{{- if .Values.terminationGracePeriodSeconds }}
{{- $grace := int .Values.terminationGracePeriodSeconds }}
{{- if le $grace $shutdown }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must exceed shutdownTimeoutSeconds (%d), or the kubelet kills calls that are still finishing" $grace $shutdown) }}
{{- end }}
{{- $grace }}
{{- else }}
{{- add $shutdown 15 }}
{{- end }}
{{- end }}

{{/* Where the chart mounts key, certificate and overrides files. */}}
{{- define "skillsvc.jwtDir" -}}/etc/skillsvc/jwt{{- end }}
{{- define "skillsvc.tlsDir" -}}/etc/skillsvc/tls{{- end }}
{{- define "skillsvc.clientCADir" -}}/etc/skillsvc/tls-client-ca{{- end }}
{{- define "skillsvc.limitsDir" -}}/etc/skillsvc/limits{{- end }}

{{/* "true" when insecure mode may serve on the pod's 0.0.0.0 listener. Only a real true (or "true") counts. */}}
{{- define "skillsvc.allowInsecureRemote" -}}
{{- if eq (toString .Values.auth.allowInsecureRemote) "true" }}true{{ end }}
{{- end }}

{{/* The client CA file: ca.crt of tls.clientCASecret, else of tls.existingSecret. */}}
{{- define "skillsvc.clientCAFile" -}}
{{- if .Values.tls.clientCASecret }}
{{- printf "%s/ca.crt" (include "skillsvc.clientCADir" .) }}
{{- else }}
{{- printf "%s/ca.crt" (include "skillsvc.tlsDir" .) }}
{{- end }}
{{- end }}

{{/*
Refuses, at render time, the settings skillsvc would refuse at start-up (or
that would keep the pod from starting), naming the values to change.
*/}}
{{- define "skillsvc.validate" -}}
{{- $auth := .Values.auth }}
{{- $mode := toString $auth.mode }}
{{- if eq $mode "jwt" }}
{{- $jwt := $auth.jwt | default dict }}
{{- $files := $jwt.files | default dict }}
{{- $anyFile := or $files.secret $files.publicKey $files.jwks }}
{{- if and $jwt.existingSecret (not $anyFile) }}
{{- fail (printf "auth.jwt.existingSecret (%s) is set but no key of it is used: set auth.jwt.files.secret (HS256 secret), auth.jwt.files.publicKey (PEM) and/or auth.jwt.files.jwks (JWKS) to the Secret's key names" $jwt.existingSecret) }}
{{- end }}
{{- if and $anyFile (not $jwt.existingSecret) }}
{{- fail "auth.jwt.files.* name keys of auth.jwt.existingSecret, which is empty: set it to the Secret holding them" }}
{{- end }}
{{- if not (or $anyFile $jwt.jwksUrl) }}
{{- fail "auth.mode=jwt needs a key to verify tokens: set auth.jwt.existingSecret together with auth.jwt.files.secret (HS256 secret), auth.jwt.files.publicKey (PEM) or auth.jwt.files.jwks (JWKS), and/or auth.jwt.jwksUrl. (Only if a mesh or gateway already authenticates every caller: auth.mode=insecure with auth.allowInsecureRemote=true.)" }}
{{- end }}
{{- else if eq $mode "insecure" }}
{{- if not (include "skillsvc.allowInsecureRemote" .) }}
{{- fail "auth.mode=insecure trusts the x-skillsvc-* identity metadata as sent, so skillsvc refuses it on the pod's 0.0.0.0 listener: use auth.mode=jwt, or set auth.allowInsecureRemote=true if a mesh or gateway already authenticates every caller" }}
{{- end }}
{{- else }}
{{- fail (printf "auth.mode must be jwt or insecure, not %q" $mode) }}
{{- end }}
{{- if and .Values.tls.enabled (not .Values.tls.existingSecret) }}
{{- fail "tls.enabled needs tls.existingSecret: a kubernetes.io/tls Secret with tls.crt and tls.key (and ca.crt for tls.clientCA), e.g. a cert-manager Certificate's secretName" }}
{{- end }}
{{- if and .Values.metrics.enabled .Values.metrics.tls (not .Values.tls.enabled) }}
{{- fail "metrics.tls serves /metrics with the gRPC listener's certificate: it needs tls.enabled and tls.existingSecret" }}
{{- end }}
{{- range $user, $o := .Values.limits.overrides }}
{{- if not (or (kindIs "invalid" $o) (kindIs "map" $o)) }}
{{- fail (printf "limits.overrides.%s must be a map of rate, burst and concurrency" $user) }}
{{- end }}
{{- range $k, $_ := $o }}
{{- if not (has $k (list "rate" "burst" "concurrency")) }}
{{- fail (printf "limits.overrides.%s.%s: only rate, burst and concurrency can be overridden" $user $k) }}
{{- end }}
{{- end }}
{{- end }}
{{- if not .Values.audit.output }}
{{- fail "audit.output must not be empty: stdout, stderr, off or a file path under /tmp" }}
{{- end }}
{{- end }}

{{/*
GOMEMLIMIT in bytes: goMemLimitPercent of resources.limits.memory, a
Kubernetes quantity (1Gi, 512Mi, 1G, 1073741824, ...). Empty without a limit
or with the percentage at 0.
*/}}
{{- define "skillsvc.goMemLimit" -}}
{{- $raw := dig "limits" "memory" "" (.Values.resources | default dict) }}
{{- $pct := .Values.goMemLimitPercent | default 0 | float64 }}
{{- if and $raw (gt $pct 0.0) }}
{{- if gt $pct 100.0 }}
{{- fail (printf "goMemLimitPercent (%v) must be at most 100: GOMEMLIMIT above the container limit cannot prevent an OOM kill" .Values.goMemLimitPercent) }}
{{- end }}
{{- /* A number in a values file arrives as a float64, printed with an exponent. */}}
{{- $limit := ternary (printf "%.0f" (float64 $raw)) (toString $raw) (or (kindIs "float64" $raw) (kindIs "int64" $raw) (kindIs "int" $raw)) }}
{{- if not (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$" $limit) }}
{{- fail (printf "resources.limits.memory %q: use a plain number of bytes or a Ki, Mi, Gi, Ti, k, M, G or T suffix (goMemLimitPercent reads it; set goMemLimitPercent to 0 to skip)" $limit) }}
{{- end }}
{{- $num := regexFind "^[0-9.]+" $limit | float64 }}
{{- $unit := trimPrefix (regexFind "^[0-9.]+" $limit) $limit }}
{{- $mult := get (dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776) $unit }}
{{- printf "%d" (int64 (floor (divf (mulf $num $mult $pct) 100))) }}
{{- end }}
{{- end }}

{{/* The names set by extraEnv, as a JSON array. */}}
{{- define "skillsvc.extraEnvNames" -}}
{{- $names := list }}
{{- range .Values.extraEnv }}{{ $names = append $names (toString .name) }}{{ end }}
{{- toJson $names }}
{{- end }}
