{{/* Object names: "syncward" (deploy/'s) unless overridden. */}}
{{- define "syncward.fullname" -}}
{{- .Values.fullnameOverride | default "syncward" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* deploy/'s labels, and Helm's. */}}
{{- define "syncward.labels" -}}
app.kubernetes.io/name: syncward
app.kubernetes.io/part-of: syncward
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The pods' selector, as deploy/'s (a Deployment's selector cannot change later). */}}
{{- define "syncward.selector" -}}
app.kubernetes.io/name: syncward
app.kubernetes.io/component: controller
{{- end -}}

{{- define "syncward.subject" -}}
- kind: ServiceAccount
  name: {{ include "syncward.fullname" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{- define "syncward.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}
