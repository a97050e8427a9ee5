"""Who reaches a colour's preview hosts (`<host>-<colour>.<sub-zone>`): the networks of `traffic.preview_cidrs`, or
unset, those of `eks.public_access_cidrs` (where the operators, CI and so readiness already come from), as a
`source-ip` condition on each preview rule of the shared load balancer. A request from elsewhere matches no rule and
gets the listener's default answer (model/routes.NOT_FOUND), as an unknown host does.

A colour usually follows a branch, so its preview hosts serve what nobody reviewed yet, and without the WAF by default:
they are the team's, not the internet's. Networks, not the single sign-on of `argocd.sso` (an `authenticate-oidc`
action before the forward), because the load balancer takes the OIDC client secret as a rule attribute: it would sit in
the traffic stack's state, which every colour reads (`terraform_remote_state` reads the whole state file), and reading it
from Secrets Manager by name only moves it there through a data source; only `argocd.sso.kind` `oidc` fits the action at
all (GitHub's OAuth and SAML do not), each preview host is a redirect URI the provider must list, and the load
balancer would need a way out to the provider (docs/applications.md, "Preview hosts", cites each).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the configuration's rules read this module: a type only, no import cycle
    from model.config import Config


# "You can specify up to three comparison strings per condition and up to five per rule" (Elastic Load Balancing,
# "Listener rules for your Application Load Balancer", Rule basics,
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/listener-rules.html); "Condition values per rule"
# is 5 and not adjustable ("Quotas for your Application Load Balancers",
# https://docs.aws.amazon.com/elasticloadbalancing/latest/application/load-balancer-limits.html). A preview rule's host
# takes one value, so its source-ip condition holds at most three networks: more make more rules of the same host.
SOURCE_IPS_PER_RULE = 3
KEY = "traffic.preview_cidrs"
FALLBACK_KEY = "eks.public_access_cidrs"


def preview_networks(config: Config) -> tuple[str, ...]:
    """The networks the preview hosts answer, as configured (validated by model/config/traffic_settings.py)."""
    own = config.traffic.preview_cidrs
    return config.eks.public_access_cidrs if own is None else own


def networks_key(config: Config) -> str:
    """The setting preview_networks comes from, for messages."""
    return FALLBACK_KEY if config.traffic.preview_cidrs is None else KEY


def source_groups(networks: Iterable[str]) -> list[tuple[str, ...]]:
    """The networks, adjacent and nested ones merged (fewer rules, the same addresses), in groups of at most
    SOURCE_IPS_PER_RULE: one preview rule per group and host. Each group in address order, so the same networks always
    give the same rules."""
    merged = [str(n) for n in ipaddress.collapse_addresses(ipaddress.IPv4Network(cidr) for cidr in networks)]
    return [tuple(merged[i : i + SOURCE_IPS_PER_RULE]) for i in range(0, len(merged), SOURCE_IPS_PER_RULE)]


def rule_key(host: str, index: int) -> str:
    """The priority key of a preview host's index-th rule: the first one's is the host itself, so the rule a host had
    before it took source-ip conditions keeps its priority (and changes in place)."""
    return host if index == 0 else f"{host}#{index + 1}"
