"""A checkov check of this project (loaded with `--external-checks-dir`, tests/support/checkov.py): the internet may
reach nothing but the HTTPS port, and the HTTP port (which only redirects), of a security group's rules.

It stands in for checkov's CKV_AWS_24, CKV_AWS_25 and CKV_AWS_260 (SSH, RDP and HTTP open to the world), which
.checkov.yaml skips: checkov 3.3 reads a rule admitting another security group (`referenced_security_group_id`, how
each colour admits the shared load balancer: components/load_balancer_access.py) as open to 0.0.0.0/0 (bridgecrewio/
checkov issue 6624), and terraform_json has no skip for one resource. This check reads that field, and is stricter
than the three it replaces: any port but 80 and 443 open to the world fails, not only 22, 3389 and 80. Runs in
checkov's own virtualenv (scripts/checkov/Pipfile).
"""

from __future__ import annotations

from typing import Any

from checkov.common.models.enums import CheckCategories, CheckResult
from checkov.terraform.checks.resource.base_resource_check import BaseResourceCheck

CHECK_ID = "CKV_EKSBG_2"
ANYWHERE = {"0.0.0.0/0", "::/0"}
# The shared load balancer's listeners (components/shared_load_balancer.py): HTTPS, and HTTP that redirects to it.
PUBLIC_PORTS = {80, 443}
CIDR_KEYS = ("cidr_blocks", "ipv6_cidr_blocks", "cidr_ipv4", "cidr_ipv6")


def _values(rule: dict[str, Any], key: str) -> list[Any]:
    """checkov hands every attribute over as a list (hclified), a list attribute as a list in a list."""
    found = rule.get(key) or []
    flat: list[Any] = []
    for item in found if isinstance(found, list) else [found]:
        flat.extend(item if isinstance(item, list) else [item])
    return flat


def _first(rule: dict[str, Any], key: str) -> Any:
    values = _values(rule, key)
    return values[0] if values else None


def open_beyond_public_ports(rule: dict[str, Any]) -> bool:
    """The rule admits the whole internet to something other than TCP 80 or 443 alone."""
    if not ANYWHERE & {str(cidr) for key in CIDR_KEYS for cidr in _values(rule, key)}:
        return False  # a CIDR of the project's own, another security group or a prefix list
    protocol = str(_first(rule, "ip_protocol") or _first(rule, "protocol") or "")
    low, high = _first(rule, "from_port"), _first(rule, "to_port")
    return not (protocol in {"tcp", "6"} and low == high and low in PUBLIC_PORTS)


class InternetOnlyOnPublicPorts(BaseResourceCheck):  # type: ignore[misc]  # checkov ships no type information
    def __init__(self) -> None:
        super().__init__(
            name="The internet reaches only the shared load balancer's ports 443 and 80 (redirect)",
            id=CHECK_ID,
            categories=[CheckCategories.NETWORKING],
            supported_resources=["aws_security_group", "aws_security_group_rule", "aws_vpc_security_group_ingress_rule"],
        )

    def scan_resource_conf(self, conf: dict[str, Any]) -> CheckResult:
        if self.entity_type == "aws_security_group":
            rules = [rule for rule in _values(conf, "ingress") if isinstance(rule, dict)]
        elif self.entity_type == "aws_security_group_rule":
            rules = [conf] if _first(conf, "type") == "ingress" else []
        else:
            rules = [conf]
        return CheckResult.FAILED if any(open_beyond_public_ports(rule) for rule in rules) else CheckResult.PASSED


check = InternetOnlyOnPublicPorts()
