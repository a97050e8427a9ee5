{{- /*
The values contract these templates were written for (model/values.py CONTRACT_VERSION), read from `blueGreen`: see argocd/apps'.
*/ -}}
{{- define "sample-app.contract" -}}
{{- $written := 2 -}}
{{- $handed := toString (dig "contractVersion" "none" (.Values.blueGreen | default dict)) -}}
{{- if ne $handed (toString $written) -}}
{{- fail (printf "the %s chart was written for values contract %d, but Terraform handed it contract %s: deploy this colour with a version of the project whose contract matches the charts at its gitops_revision (docs/upgrading.md: A change of the values contract)" .Chart.Name $written $handed) -}}
{{- end -}}
{{- end -}}
