{{- define "sample-app.labels" -}}
app.kubernetes.io/name: sample-app
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "sample-app.selector" -}}
app.kubernetes.io/name: sample-app
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
