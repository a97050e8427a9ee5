{{- /*
The values contract these templates were written for (model/values.py CONTRACT_VERSION): see argocd/apps'.
*/ -}}
{{- define "sample-app.contract" -}}
{{- $written := 1 -}}
{{- $handed := toString (.Values.contractVersion | default "none") -}}
{{- if ne $handed (toString $written) -}}
{{- fail (printf "argocd/sample-app was written for values contract %d, but Terraform handed it contract %s: deploy this colour with a version of the project whose contract matches the charts at its gitops_revision (docs/upgrading.md: A change of the values contract)" $written $handed) -}}
{{- end -}}
{{- end -}}
