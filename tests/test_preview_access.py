"""Who reaches the preview hosts (model/preview_access.py): `traffic.preview_cidrs`, by default the networks of
`eks.public_access_cidrs`, each one checked, and as many rules per preview host as three networks a rule need. The
synthesized rules are tests/test_traffic_stack.py's; readiness meeting the load balancer's refusal, tests/test_readiness.py's.
No synth here: configurations only."""

from __future__ import annotations

from typing import Any

import pytest

from model.config import ALB_RULES, LOUD, PLACEHOLDER_API_NETWORK
from model.preview_access import preview_networks, source_groups
from model.rules import config_warnings
from tests.support.configs import OPERATORS_NETWORK, named_release, validated
from tests.support.refusals import one_problem

PRIVATE_API = {"endpoint_public_access": False, "public_access_cidrs": []}
SHOP = {"host": "shop", "source": {"path": "charts/shop"}}


def previews(cidrs: Any = None, **eks: Any) -> dict[str, Any]:
    """One application (so preview hosts) with traffic.preview_cidrs (None: unset) and these eks settings."""
    raw: dict[str, Any] = {"applications": {"shop": SHOP}} | ({"eks": eks} if eks else {})
    return raw | ({"traffic": {"preview_cidrs": cidrs}} if cidrs is not None else {})


def preview_warnings(raw: dict[str, Any]) -> list[str]:
    return [w for w in config_warnings(validated(raw)) if "preview hosts" in w or "preview host " in w]


def test_by_default_the_preview_hosts_answer_the_networks_the_operators_named_for_the_api() -> None:
    assert preview_networks(validated(previews())) == (OPERATORS_NETWORK,)
    assert preview_networks(validated(previews(["192.0.2.0/24"]))) == ("192.0.2.0/24",)


@pytest.mark.parametrize(
    ("cidr", "why"),
    [
        ("198.51.100.7/24", "198.51.100.7/24 has host bits set"),
        ("198.51.100.0/33", "'33' is not a valid netmask"),
        ("2001:db8::/32", "Expected 4 octets in '2001:db8::'"),  # the shared load balancer speaks IPv4 only
        ("office", "Expected 4 octets in 'office'"),
    ],
)
def test_fails_on_a_preview_network_that_is_no_ipv4_network_naming_key_and_value(cidr: str, why: str) -> None:
    assert one_problem(previews(["192.0.2.0/24", cidr])) == (
        f"traffic.preview_cidrs[1]: \"{cidr}\" is not allowed; use an IPv4 network such as '198.51.100.0/24' ({why})"
    )


def test_fails_on_an_empty_list_of_preview_networks() -> None:
    assert one_problem(previews([])) == (
        "traffic.preview_cidrs: [] is not allowed; list at least one IPv4 network the preview hosts answer, or leave "
        "traffic.preview_cidrs unset for eks.public_access_cidrs's"
    )


def test_fails_with_a_private_api_endpoint_and_no_preview_networks() -> None:
    """Nothing to default to: refused rather than preview hosts that answer nobody, or everybody."""
    problem = one_problem(previews(**PRIVATE_API))
    assert problem.startswith(
        "traffic.preview_cidrs: null is not allowed; eks.public_access_cidrs is empty (a private API endpoint), so the "
        "preview hosts have no networks to default to: list the IPv4 networks readiness and your team reach them from"
    )
    assert preview_networks(validated(previews(["192.0.2.0/24"], **PRIVATE_API))) == ("192.0.2.0/24",)
    # Without applications there is no preview host to open.
    assert validated({"applications": {}, "eks": PRIVATE_API}).traffic.preview_cidrs is None


def test_warns_while_the_preview_networks_are_the_documentation_placeholder() -> None:
    """The shipped example's eks.public_access_cidrs: readiness could reach no preview host from anywhere."""
    (warning,) = preview_warnings(previews(public_access_cidrs=[PLACEHOLDER_API_NETWORK]))
    assert warning.startswith(
        "eks.public_access_cidrs names 203.0.113.0/24, the documentation placeholder, and the preview hosts answer only "
        "those networks: readiness"
    )
    (warning,) = preview_warnings(previews([PLACEHOLDER_API_NETWORK]))
    assert warning.startswith("traffic.preview_cidrs names 203.0.113.0/24")
    assert preview_warnings(previews(["192.0.2.0/24"], public_access_cidrs=[PLACEHOLDER_API_NETWORK])) == []


@pytest.mark.parametrize("cidrs", [["0.0.0.0/0"], ["0.0.0.0/1", "128.0.0.0/1"]])
def test_warns_loudly_while_the_whole_internet_reaches_the_preview_hosts(cidrs: list[str]) -> None:
    """Allowed (a public beta of a colour is the team's choice), never quietly: main.py frames a LOUD warning."""
    (warning,) = preview_warnings(previews(cidrs))
    assert warning.startswith(f"{LOUD}traffic.preview_cidrs {cidrs} lets the whole internet reach every preview host")
    assert preview_warnings(previews()) == []  # the operators' network: nothing to say


def test_networks_are_merged_then_grouped_three_a_rule() -> None:
    """Hand-computed: 10.1.0.0/25 and 10.1.0.128/25 are 10.1.0.0/24, which holds 10.1.0.64/26; a repeat counts once."""
    cidrs = ["198.51.100.0/24", "10.1.0.0/25", "10.1.0.128/25", "10.1.0.64/26", "192.0.2.8/29", "203.0.113.1/32"]
    assert source_groups([*cidrs, "192.0.2.8/29"]) == [
        ("10.1.0.0/24", "192.0.2.8/29", "198.51.100.0/24"),
        ("203.0.113.1/32",),
    ]
    assert source_groups(["192.0.2.0/24"]) == [("192.0.2.0/24",)]


def test_fails_when_the_preview_rules_of_many_networks_pass_the_load_balancers_rules() -> None:
    """10 applications in 2 colours: 30 rules with up to 3 networks; 7 networks take 3 rules per preview host, 70; 10
    take 4, 90; 13 take 5, 110."""
    apps = {f"app{n}": {**SHOP, "host": f"app{n}"} for n in range(10)}
    colours = {
        "blue": {"kubernetes_version": "1.35", "weight": 100, **named_release(applications={})},
        "green": {"kubernetes_version": "1.36"},
    }
    networks = [f"192.0.{n}.0/24" for n in range(0, 26, 2)]  # 13, none adjacent: nothing merges
    raw = {"applications": apps, "clusters": colours, "traffic": {"preview_cidrs": networks}}
    problem = one_problem(raw)
    assert problem.startswith(
        'applications: "10 applications, 2 colours" is not allowed; they need 110 listener rules (a public host per '
        "application, and per application and colour a preview host: 5 rule(s), 3 networks of traffic.preview_cidrs a "
        f"rule) on the shared load balancer, which allows {ALB_RULES}"
    )
    raw["traffic"] = {"preview_cidrs": networks[:10]}
    assert len(validated(raw).applications) == 10
