"""Single sign-on through Argo CD's bundled Dex (#31 item 3, docs/argocd-access.md): GitHub (OAuth) and IAM Identity
Center (SAML 2.0), which Argo CD's own OIDC client cannot reach. The argo-cd child's values are rendered from each
configuration's facts (argocd/apps, as the colour's Argo CD renders it); the expectations are upstream's field names:
argo-cd docs/operator-manual/user-management/index.md and identity-center.md (v3.5.1), Dex's connector/github/github.go
and connector/saml/saml.go (v2.45.1, the image of argo-cd chart 10.1.1)."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
import yaml

from model.argocd_access import SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY
from model.external_secrets import sso_client_secret
from model.platform import ARGOCD_NAMESPACE
from model.values import cluster_facts
from tests.support.charts import by_kind, render, sample_for
from tests.support.configs import ARGOCD_SSO, SSO_SECRET_NAME, VARIANT, validated
from tests.support.refusals import one_problem, problems_of

URL = "https://argocd.acme.internal"
CALLBACK = "https://argocd.acme.internal/api/dex/callback"  # upstream: "the `/api/dex/callback` endpoint of your Argo CD URL"
PEM = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"
CA_DATA = base64.b64encode(PEM.encode()).decode()
GITHUB: dict[str, Any] = {
    "url": URL,
    "sso": {
        "kind": "github",
        "name": "GitHub",
        "client_id": "Iv1.8a61f9b3a7aba766",
        "client_secret": SSO_SECRET_NAME,
        "orgs": {"acme": ["platform-admins", "sre"], "acme-labs": []},
        "hostname": "github.acme.example.com",
    },
    "admin_groups": ["acme:platform-admins"],
}
SAML: dict[str, Any] = {
    "url": URL,
    "sso": {
        "kind": "saml",
        "name": "AWS IAM Identity Center",
        "sso_url": "https://portal.sso.ap-northeast-1.amazonaws.com/saml/assertion/MDEyMzQ1",
        "ca_data": CA_DATA,
    },
    "admin_groups": ["9067d8a5c1-6b2e0f8c-1234-4e5f-a6b7-c8d9e0f1a2b3"],
}
FAKE_CLIENT_SECRET = "fake-client-secret-7Qm2-never-in-output"


def with_argocd(argocd: dict[str, Any]) -> dict[str, Any]:
    raw = copy.deepcopy(VARIANT)
    raw["argocd"] = copy.deepcopy(argocd)
    return raw


def rendered(argocd: dict[str, Any]) -> dict[str, Any]:
    """The argo-cd child's values argocd/apps renders for one colour of the variant with this `argocd`."""
    facts = cluster_facts(config=validated(with_argocd(argocd)), colour="green", common=sample_for, target_group=lambda a: a)
    docs = render("apps", facts, release="apps", namespace=ARGOCD_NAMESPACE)
    values: dict[str, Any] = by_kind(docs, "Application")["argo-cd"]["spec"]["source"]["helm"]["valuesObject"]
    return values | {"_facts": facts}


@pytest.fixture(scope="module")
def values() -> dict[str, dict[str, Any]]:
    return {"github": rendered(GITHUB), "saml": rendered(SAML), "oidc": rendered(ARGOCD_SSO)}


def connector(values: dict[str, Any]) -> dict[str, Any]:
    (only,) = yaml.safe_load(values["configs"]["cm"]["dex.config"])["connectors"]
    assert isinstance(only, dict)
    return only


def test_github_is_dexs_github_connector_with_the_secret_referenced(values: dict[str, dict[str, Any]]) -> None:
    github = values["github"]
    assert github["dex"] == {"enabled": True}
    assert connector(github) == {
        "type": "github",
        "id": "github",
        "name": "GitHub",
        "config": {
            "clientID": "Iv1.8a61f9b3a7aba766",
            "clientSecret": "$argocd-sso-client:clientSecret",  # Argo CD's `$<secret>:<key>`: the reference, not a value
            "redirectURI": CALLBACK,
            "orgs": [{"name": "acme", "teams": ["platform-admins", "sre"]}, {"name": "acme-labs"}],
            "teamNameField": "slug",
            "hostName": "github.acme.example.com",
        },
    }
    assert f"${SSO_CLIENT_SECRET}:{SSO_CLIENT_SECRET_KEY}" == "$argocd-sso-client:clientSecret"


def test_saml_is_dexs_saml_connector_as_upstreams_identity_center_guide(values: dict[str, dict[str, Any]]) -> None:
    saml = values["saml"]
    assert saml["dex"] == {"enabled": True}
    assert connector(saml) == {
        "type": "saml",
        "id": "saml",
        "name": "AWS IAM Identity Center",
        "config": {
            "ssoURL": SAML["sso"]["sso_url"],
            "caData": CA_DATA,
            "entityIssuer": CALLBACK,  # the default: the guide's entityIssuer is the callback too
            "redirectURI": CALLBACK,
            "usernameAttr": "email",
            "emailAttr": "email",
            "groupsAttr": "groups",
        },
    }
    assert base64.b64decode(connector(saml)["config"]["caData"]).decode() == PEM


@pytest.mark.parametrize("kind", ["github", "saml"])
def test_with_dex_no_oidc_config_no_local_admin_and_groups_from_dex(values: dict[str, dict[str, Any]], kind: str) -> None:
    configs = values[kind]["configs"]
    assert "oidc.config" not in configs["cm"]
    assert configs["cm"]["admin.enabled"] == "false"
    assert configs["cm"]["url"] == URL
    assert configs["rbac"]["scopes"] == "[groups]"
    assert configs["rbac"]["policy.csv"] == f"g, {(GITHUB if kind == 'github' else SAML)['admin_groups'][0]}, role:admin"


def test_oidc_and_no_sso_keep_dex_off(values: dict[str, dict[str, Any]]) -> None:
    assert values["oidc"]["dex"] == {"enabled": False}
    assert "dex.config" not in values["oidc"]["configs"]["cm"]
    assert "oidc.config" in values["oidc"]["configs"]["cm"]
    assert rendered({})["dex"] == {"enabled": False}


def test_the_secret_is_copied_for_oidc_and_github_not_saml() -> None:
    for argocd in (ARGOCD_SSO, GITHUB):
        (copy_,) = sso_client_secret(validated(with_argocd(argocd)))
        assert (copy_.secret, copy_.name, copy_.key) == (SSO_SECRET_NAME, SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY)
    assert sso_client_secret(validated(with_argocd(SAML))) == ()


def test_no_secret_value_in_the_facts_or_the_values(values: dict[str, dict[str, Any]]) -> None:
    """Only the secret's name is configuration: the facts name it (for the ExternalSecret that makes the cluster's
    Secret), the argo-cd child's values carry only the `$<secret>:<key>` reference."""
    child = {key: value for key, value in values["github"].items() if key != "_facts"}
    assert SSO_SECRET_NAME not in json.dumps(child)
    assert SSO_SECRET_NAME in json.dumps(values["github"]["_facts"])
    assert FAKE_CLIENT_SECRET not in json.dumps(values["github"], default=str)


def test_an_explicit_entity_issuer_is_kept() -> None:
    argocd = copy.deepcopy(SAML)
    argocd["sso"]["entity_issuer"] = "https://argocd.acme.internal/saml"
    assert connector(rendered(argocd))["config"]["entityIssuer"] == "https://argocd.acme.internal/saml"


# --- refusals ------------------------------------------------------------------------------------


def test_fails_a_field_of_another_kind() -> None:
    argocd = copy.deepcopy(GITHUB)
    argocd["sso"]["sso_url"] = "https://portal.sso.ap-northeast-1.amazonaws.com/saml/assertion/x"
    assert one_problem(with_argocd(argocd)) == (
        'argocd.sso.sso_url: "https://portal.sso.ap-northeast-1.amazonaws.com/saml/assertion/x" is not allowed; a field of '
        "kind saml, and argocd.sso.kind is github: remove it, or set the kind it belongs to"
    )
    oidc = copy.deepcopy(ARGOCD_SSO)
    oidc["sso"]["orgs"] = {"acme": []}
    assert one_problem(with_argocd(oidc)) == (
        'argocd.sso.orgs: {"acme": []} is not allowed; a field of kind github, and argocd.sso.kind is oidc: remove it, '
        "or set the kind it belongs to"
    )


def test_fails_an_unknown_key_naming_only_the_keys_of_its_kind() -> None:
    """Each kind is a model of its own fields: an unknown key is told the keys of the kind set, not of all three."""
    argocd = copy.deepcopy(SAML)
    argocd["sso"]["bogus"] = 1
    assert one_problem(with_argocd(argocd)) == (
        "argocd.sso.bogus: 1 is not allowed; unknown key; allowed keys: ca_data, email_attr, entity_issuer, groups_attr, "
        "kind, name, sso_url, username_attr"
    )


def test_fails_github_without_orgs_or_client() -> None:
    argocd = {"sso": {"kind": "github"}, "admin_groups": ["acme:admins"]}
    assert problems_of(with_argocd(argocd)) == (
        'argocd.sso.client_id: "" is not allowed; argocd.sso (github) needs the client ID the provider gave Argo CD',
        'argocd.sso.client_secret: "" is not allowed; argocd.sso (github) needs the name of the Secrets Manager secret '
        "holding the client secret",
        "argocd.sso.orgs: {} is not allowed; argocd.sso (github) needs the GitHub organisations whose members may log in",
    )


def test_fails_saml_without_its_url_and_certificate() -> None:
    argocd = {"sso": {"kind": "saml"}, "admin_groups": ["admins"]}
    assert problems_of(with_argocd(argocd)) == (
        'argocd.sso.sso_url: "" is not allowed; argocd.sso (saml) needs the provider\'s SAML sign-in URL',
        'argocd.sso.ca_data: "" is not allowed; argocd.sso (saml) needs the provider\'s certificate, its PEM file in base64',
    )


def test_fails_ca_data_that_is_not_a_base64_pem_certificate() -> None:
    argocd = copy.deepcopy(SAML)
    argocd["sso"]["ca_data"] = base64.b64encode(b"not a certificate").decode()
    assert one_problem(with_argocd(argocd)) == (
        'argocd.sso.ca_data: "(not shown)" is not allowed; use the base64 of the provider\'s PEM certificate, BEGIN and '
        "END lines included (`base64 -w0 cert.pem`)"
    )


def test_fails_an_unknown_kind_and_team_name_field() -> None:
    argocd = copy.deepcopy(GITHUB)
    argocd["sso"]["team_name_field"] = "id"
    assert one_problem(with_argocd(argocd)) == ("argocd.sso.team_name_field: \"id\" is not allowed; use 'slug', 'name' or 'both'")
    argocd["sso"] = {"kind": "ldap"}
    # The first problem (the fields the default kind, oidc, would need follow it).
    assert problems_of(with_argocd(argocd))[0] == ("argocd.sso.kind: \"ldap\" is not allowed; use 'oidc', 'github' or 'saml'")


def test_the_value_names_are_the_argo_cd_charts(values: dict[str, dict[str, Any]]) -> None:
    """`dex.enabled` and `configs.cm."dex.config"` are the argo-cd chart's (tests/fixtures/argo-cd-values/keys.yaml, read
    from its values.yaml at each tag there: `dex.enabled`, and the commented `dex.config` example under configs.cm)."""
    from tests.test_argocd_access import KEYS

    for release in yaml.safe_load(KEYS.read_text())["releases"]:
        assert set(values["github"]["configs"]["cm"]) <= set(release["configs.cm"]), release["tag"]
        assert "dex.enabled" in release["other"], release["tag"]
