"""A checkov check of this project (loaded with `--external-checks-dir`, tests/support/checkov.py): an Ingress's rule
hosts and the host names it asks ExternalDNS for are the same set.

The sample app's Ingress answers the shared, weighted host and the colour's own preview host
(argocd/sample-app/templates/ingress.yaml); a host the ALB routes but no record points at is unreachable, and a
record for a host the ALB does not route answers 404 (readiness's probe would fail on the colour, late). Runs in
checkov's own virtualenv (scripts/checkov/Pipfile).
"""

from __future__ import annotations

from typing import Any

from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.kubernetes.checks.resource.base_spec_check import BaseK8Check

HOSTNAME_ANNOTATION = "external-dns.alpha.kubernetes.io/hostname"
CHECK_ID = "CKV_EKSBG_1"


class IngressHostsHaveRecords(BaseK8Check):  # type: ignore[misc]  # checkov ships no type information
    def __init__(self) -> None:
        super().__init__(
            name="An Ingress routes exactly the hosts it asks ExternalDNS to publish",
            id=CHECK_ID,
            categories=[CheckCategories.KUBERNETES],
            supported_entities=["Ingress"],
        )

    def scan_spec_conf(self, conf: dict[str, Any]) -> CheckResult:
        # checkov's runner hands annotations over as a list of mappings (its own checks use force_list too).
        given = (conf.get("metadata") or {}).get("annotations") or {}
        annotations = {k: v for part in (given if isinstance(given, list) else [given]) for k, v in part.items()}
        if HOSTNAME_ANNOTATION not in annotations:
            return CheckResult.UNKNOWN  # not published by ExternalDNS: nothing to compare
        published = {h.strip() for h in str(annotations[HOSTNAME_ANNOTATION]).split(",") if h.strip()}
        routed = {rule.get("host") for rule in (conf.get("spec") or {}).get("rules") or [] if rule.get("host")}
        return CheckResult.PASSED if published == routed else CheckResult.FAILED


check = IngressHostsHaveRecords()
