"""Settings of an earlier release that moved or went (the `applications-as-data-settings` and `contract-1-settings`
migrations of model/migrations/): their key, with `*` for a colour, and what to do instead. model/problems.py says it
in place of "not allowed" when a configuration still names one. Data only.
"""

from __future__ import annotations

_AS_DATA = " (docs/upgrading.md: applications as data)"
_CONTRACT_1_GONE = (
    "contract 1 is no longer written: retire that colour with the release before this one (docs/upgrading.md: "
    "applications as data, traffic outside the clusters) first"
)

# #29, #30: the sample app became an application, and the traffic moved to the shared load balancer.
RETIRED_WITH_APPLICATIONS_AS_DATA = {
    "dns.app_host": "the sample app's host is now an application's: applications.<name>.host" + _AS_DATA,
    "app": "the sample app is now an application (applications.<name>): app.image_tag is applications.<name>.image.tag; "
    "app.delivery is gone (Argo CD delivers every application)" + _AS_DATA,
    "clusters.*.image_tag": "a colour's image tag is now per application: clusters.<colour>.applications.<name>.image_tag"
    + _AS_DATA,
    "image.repository": "an application's ECR repository is applications.<name>.image.repository" + _AS_DATA,
    "traffic.shift.dns_timeout_seconds": "the shift no longer waits for DNS: it changes the shared load balancer's "
    "rules, which it reads back within seconds; remove the key (docs/upgrading.md: moving to the shared load balancer)",
}
# #46: values contract 1 and the colours that read it (legacy colours) are gone.
RETIRED_WITH_CONTRACT_1 = {
    "clusters.*.legacy_application": _CONTRACT_1_GONE,
    "traffic.record_ttl": "it was the TTL of the records a colour with legacy_application had its ExternalDNS write: "
    "remove the key; " + _CONTRACT_1_GONE,
}
RETIRED = {**RETIRED_WITH_APPLICATIONS_AS_DATA, **RETIRED_WITH_CONTRACT_1}
