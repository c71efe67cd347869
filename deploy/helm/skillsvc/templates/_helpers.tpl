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
