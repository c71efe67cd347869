{{/* Where the chart mounts the config file (a ConfigMap volume). */}}
{{- define "skillsvc.configDir" -}}/etc/skillsvc/config{{- end }}

{{/*
The settings the named values decide, as the nested map of skillsvc's config
file (keys are the option names split at "."). Secrets never go here: the
Redis password comes from the environment, keys and certificates are mounted
files named by path.
*/}}
{{- define "skillsvc.settings" -}}
{{- $v := .Values }}
{{- $c := dict "listen" "0.0.0.0:7070" "storage" "s3" }}
{{- $_ := set $c "http" (dict "listen" (ternary (printf "0.0.0.0:%d" (int $v.http.port)) "" (eq (toString $v.http.enabled) "true"))) }}

{{- $s3 := dict "bucket" (required "s3.bucket is required" $v.s3.bucket) "region" $v.s3.region "path-style" ($v.s3.pathStyle | default false) }}
{{- with $v.s3.endpoint }}{{ $_ := set $s3 "endpoint" . }}{{ end }}
{{- $_ = set $c "s3" $s3 }}
{{- with $v.mounts }}{{ $_ := set $c "mounts" . }}{{ end }}

{{- with $v.cache.redis }}
{{- if .addrs }}
{{- $r := dict "addrs" .addrs "cluster" (.cluster | default false) "tls" (dict "enabled" (.tls | default false)) }}
{{- with .masterName }}{{ $_ := set $r "master-name" . }}{{ end }}
{{- with .keyPrefix }}{{ $_ := set $r "key-prefix" . }}{{ end }}
{{- $_ := set $c "cache" (dict "redis" $r) }}
{{- end }}
{{- end }}

{{- $auth := dict "mode" (toString $v.auth.mode) }}
{{- if eq (toString $v.auth.mode) "insecure" }}
{{- /* Allowed by auth.allowInsecureRemote: the chart refuses insecure mode without it. */}}
{{- $_ := set $auth "allow-insecure-remote" true }}
{{- else }}
{{- $jwt := $v.auth.jwt | default dict }}
{{- $files := $jwt.files | default dict }}
{{- $j := dict }}
{{- if $jwt.existingSecret }}
{{- $dir := include "skillsvc.jwtDir" . }}
{{- if $files.secret }}{{ $_ := set $j "secret-file" (printf "%s/secret" $dir) }}{{ end }}
{{- if $files.publicKey }}{{ $_ := set $j "public-key-file" (printf "%s/public-key.pem" $dir) }}{{ end }}
{{- if $files.jwks }}{{ $_ := set $j "jwks-file" (printf "%s/jwks.json" $dir) }}{{ end }}
{{- end }}
{{- range $key, $name := dict "jwksUrl" "jwks-url" "jwksRefresh" "jwks-refresh" "reloadInterval" "reload-interval" "issuer" "issuer" "audience" "audience" "leeway" "leeway" "userClaim" "user-claim" "threadClaim" "thread-claim" "ticketClaim" "ticket-claim" "scopeClaim" "scope-claim" "adminScope" "admin-scope" }}
{{- with get $jwt $key }}{{ $_ := set $j $name (toString .) }}{{ end }}
{{- end }}
{{- if $j }}{{ $_ := set $auth "jwt" $j }}{{ end }}
{{- end }}
{{- $_ = set $c "auth" $auth }}

{{- if $v.tls.enabled }}
{{- $dir := include "skillsvc.tlsDir" . }}
{{- $t := dict "cert-file" (printf "%s/tls.crt" $dir) "key-file" (printf "%s/tls.key" $dir) }}
{{- if $v.tls.clientCA }}{{ $_ := set $t "client-ca-file" (include "skillsvc.clientCAFile" .) }}{{ end }}
{{- with $v.tls.reloadInterval }}{{ $_ := set $t "reload-interval" (toString .) }}{{ end }}
{{- with $v.tls.minVersion }}{{ $_ := set $t "min-version" (toString .) }}{{ end }}
{{- $_ := set $c "tls" $t }}
{{- end }}

{{- $l := dict }}
{{- with $v.limits }}
{{- /* 0 turns a limit off, so only an empty (or null) value keeps the binary's default. */}}
{{- if and (not (kindIs "invalid" .rate)) (ne (toString .rate) "") }}{{ $_ := set $l "rate" (float64 .rate) }}{{ end }}
{{- if and (not (kindIs "invalid" .burst)) (ne (toString .burst) "") }}{{ $_ := set $l "burst" (int64 .burst) }}{{ end }}
{{- if and (not (kindIs "invalid" .concurrency)) (ne (toString .concurrency) "") }}{{ $_ := set $l "concurrency" (int64 .concurrency) }}{{ end }}
{{- if .overrides }}{{ $_ := set $l "overrides-file" (printf "%s/overrides.yaml" (include "skillsvc.limitsDir" $)) }}{{ end }}
{{- end }}
{{- if $l }}{{ $_ := set $c "limits" $l }}{{ end }}

{{- with $v.events.sqs }}
{{- if .queueUrl }}
{{- $q := dict "queue-url" .queueUrl }}
{{- range $key, $name := dict "region" "region" "endpoint" "endpoint" "visibilityTimeout" "visibility-timeout" "waitTime" "wait-time" }}
{{- with get $v.events.sqs $key }}{{ $_ := set $q $name (toString .) }}{{ end }}
{{- end }}
{{- $_ := set $c "events" (dict "sqs" $q) }}
{{- end }}
{{- end }}

{{- $_ = set $c "audit" (dict "output" $v.audit.output) }}
{{- $_ = set $c "log" (dict "format" $v.log.format "level" $v.log.level) }}
{{- if $v.metrics.enabled }}
{{- $m := dict "listen" (printf "0.0.0.0:%d" (int $v.metrics.port)) }}
{{- if $v.metrics.tls }}{{ $_ := set $m "tls" true }}{{ end }}
{{- $_ := set $c "metrics" $m }}
{{- end }}
{{- $_ = set $c "shutdown-timeout" (printf "%ds" (int $v.shutdownTimeoutSeconds)) }}
{{- toYaml $c }}
{{- end }}

{{/*
config.yaml: the settings above with the free-form config value merged over
them. A key of config replaces the rendered one (false and "" too, which
Sprig's merge functions would skip); maps merge key by key.
*/}}
{{- define "skillsvc.configYaml" -}}
{{- $config := .Values.config | default dict }}
{{- if not (kindIs "map" $config) }}
{{- fail "config must be a map of skillsvc options nested by prefix, e.g. {vfs: {max-upload-bytes: 536870912}}" }}
{{- end }}
{{- $settings := include "skillsvc.settings" . | fromYaml }}
{{- include "skillsvc.mergeInto" (dict "dst" $settings "src" (deepCopy $config)) }}
{{- toYaml $settings }}
{{- end }}

{{/*
Sets every key of .src in .dst, merging maps found in both. A dotted key
("s3.bucket") is taken as its nesting, as skillsvc reads it, so it replaces
the rendered key instead of making the option appear twice.
*/}}
{{- define "skillsvc.mergeInto" -}}
{{- $dst := .dst }}
{{- range $k, $v := .src }}
{{- if contains "." $k }}
{{- $parts := splitList "." $k }}
{{- range reverse (rest $parts) }}{{ $v = dict . $v }}{{ end }}
{{- include "skillsvc.mergeInto" (dict "dst" $dst "src" (dict (first $parts) $v)) }}
{{- else if and (kindIs "map" $v) (kindIs "map" (get $dst $k)) }}
{{- include "skillsvc.mergeInto" (dict "dst" (get $dst $k) "src" $v) }}
{{- else }}
{{- $_ := set $dst $k $v }}
{{- end }}
{{- end }}
{{- end }}
