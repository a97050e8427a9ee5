{{- /*
The values contract these templates were written for. Terraform hands every colour's charts its facts with
the contract's version (`contractVersion`, model/values.py CONTRACT_VERSION). A chart of another contract would
misread them (a renamed fact reads as its default: a serving colour's weight as 0), so it refuses to render and
Argo CD keeps what runs. docs/upgrading.md: "A change of the values contract".
*/ -}}
{{- define "apps.contract" -}}
{{- $written := 2 -}}
{{- $handed := toString (.Values.contractVersion | default "none") -}}
{{- if ne $handed (toString $written) -}}
{{- fail (printf "argocd/apps was written for values contract %d, but Terraform handed it contract %s: deploy this colour with a version of the project whose contract matches the charts at its gitops_revision (docs/upgrading.md: A change of the values contract)" $written $handed) -}}
{{- end -}}
{{- end -}}
