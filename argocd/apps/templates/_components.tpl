{{- /*
The namespace a platform component runs in: with a Pod Identity binding, the one Terraform bound (the facts), so the
association and the pods agree whatever this revision's component.yaml says; otherwise its entry's.
Called with (list $ $component).
*/ -}}
{{- define "apps.componentNamespace" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- if $component.identity -}}
{{- $identity := required (printf "identities.%s is required" $component.name) (index $root.Values.identities $component.name) -}}
{{- required (printf "identities.%s.namespace is required" $component.name) $identity.namespace -}}
{{- else -}}
{{- $component.namespace -}}
{{- end -}}
{{- end -}}
{{- /* The project of an application's child: its group's (facts from before groups name none: the one default). */ -}}
{{- define "apps.applicationProject" -}}
{{- .project | default "applications" -}}
{{- end -}}
