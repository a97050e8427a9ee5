"""Private repositories: `gitops.credentials` become Argo CD repository credential templates, made in each colour by
External Secrets Operator from AWS Secrets Manager (model/external_secrets.py, docs/architecture.md).

What is proven here, from the synthesized variant (one credential for this project's repository and the shop's):
the rules of the setting; the ESO role in common may read exactly the configured secrets; Terraform bootstraps ESO
after its association and the credentials before the parent Application; the ExternalSecrets are what ESO v2.9.0's
CRDs accept (tests/fixtures/external-secrets/, written from upstream's) and what Argo CD reads as a repo-creds
Secret; the App of Apps renders the very objects Terraform applied. The emulator rehearsal
(tests/test_repository_credentials_rehearsal.py) proves a secret's value reaches none of cdktf.out, the state or the facts.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from model.argocd_access import SSO_CLIENT_SECRET, SSO_CLIENT_SECRET_KEY, argocd_facts
from model.bootstrap import ARGO_CD_SELF_MANAGED
from model.external_secrets import EXTERNAL_SECRETS, REFRESH, manifests, materialised, secret_arns
from model.paths import PROJECT_DIR
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION
from tests.support.charts import Chain, build_chain, by_kind, render, values_of_release
from tests.support.configs import ACME_SECRET, ANOTHER_REPO, REPO_URL, SSO_SECRET_NAME, VARIANT, validated
from tests.support.refusals import one_problem, problems_of
from tests.support.synth import Synthesized

SCHEMAS = yaml.safe_load((PROJECT_DIR / "tests/fixtures/external-secrets/crd-schemas-v2.9.0.yaml").read_text())
CONFIG = validated(VARIANT)
COLOURS = tuple(CONFIG.clusters)
# Argo CD's credential template label and the fields it reads (argo-cd docs/operator-manual/declarative-setup.md at
# v3.5.1, "Repository Credentials"): written here from that page, not from the code under test.
REPO_CREDS_LABEL = {"argocd.argoproj.io/secret-type": "repo-creds"}


def with_credentials(credentials: dict[str, Any], **gitops: Any) -> dict[str, Any]:
    return {"gitops": {"credentials": credentials, **gitops}}


# --- the setting -----------------------------------------------------------------------------------------------


def test_a_credential_is_a_url_prefix_and_a_secret_name() -> None:
    config = validated(VARIANT)
    (credential,) = config.gitops.credentials.values()
    assert (credential.url, credential.secret) == ("https://github.com/acme/", ACME_SECRET)


def test_fails_when_two_credentials_match_one_repository() -> None:
    raw = with_credentials(
        {"acme": {"url": "https://github.com/acme/", "secret": "a"}, "github": {"url": "https://github.com/", "secret": "g"}},
        repo_url=REPO_URL,
    )
    assert one_problem(raw) == (
        'gitops.credentials.github.url: "https://github.com/" is not allowed; gitops.repo_url '
        f"({REPO_URL}) is matched by 2 credentials (acme, github): give each repository at most one, by narrowing a "
        "credential's URL prefix"
    )


def test_fails_when_two_credentials_match_an_applications_repository() -> None:
    raw = {
        **VARIANT,
        **with_credentials(
            {"acme": {"url": "https://github.com/acme/", "secret": "a"}, "shop": {"url": ANOTHER_REPO, "secret": "s"}},
            repo_url=REPO_URL,
        ),
    }
    problem = one_problem(raw)  # the credential once, at the first repository both match (catalogue's, then orders')
    assert problem.startswith(
        f'gitops.credentials.shop.url: "{ANOTHER_REPO}" is not allowed; applications.catalogue.source.repo_url '
        f"({ANOTHER_REPO}) is matched by 2 credentials (acme, shop)"
    )


def test_fails_on_a_bad_name_url_or_secret_each_named() -> None:
    raw = with_credentials({"Acme_Org": {"url": "ftp://git.acme.example/", "secret": "argocd/acme-abcdef"}})
    assert [p.split(":")[0] for p in problems_of(raw)] == [
        "gitops.credentials.Acme_Org",
        "gitops.credentials.Acme_Org.url",
        "gitops.credentials.Acme_Org.secret",
    ]


def test_fails_without_url_or_secret() -> None:
    assert problems_of(with_credentials({"acme": {}})) == (
        'gitops.credentials.acme.url: "" is not allowed; name the URL prefix of the repositories it opens',
        'gitops.credentials.acme.secret: "" is not allowed; name its AWS Secrets Manager secret',
    )


def test_a_public_project_needs_no_credential() -> None:
    assert materialised(validated({})) == ()
    assert manifests((), region="eu-west-1") == []


# --- the objects ---------------------------------------------------------------------------------------------------


def unknown_fields(node: Any, schema: dict[str, Any], at: str = "") -> list[str]:
    """Fields the schema does not declare: the API server would prune them (structural schemas), silently."""
    found = []
    if isinstance(node, dict) and "properties" in schema:
        for key, value in node.items():
            if key in schema["properties"]:
                found += unknown_fields(value, schema["properties"][key], f"{at}.{key}")
            elif not schema.get("additionalProperties") and not schema.get("x-kubernetes-preserve-unknown-fields"):
                found.append(f"{at}.{key}")
    if isinstance(node, list) and "items" in schema:
        for i, item in enumerate(node):
            found += unknown_fields(item, schema["items"], f"{at}[{i}]")
    return found


OBJECTS = manifests(materialised(CONFIG), region=CONFIG.region)


@pytest.mark.parametrize("doc", OBJECTS, ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_each_object_is_what_esos_crds_accept(doc: dict[str, Any]) -> None:
    schema = SCHEMAS[doc["kind"]]
    assert doc["apiVersion"] == "external-secrets.io/v1"  # the version v2.9.0 serves and stores
    jsonschema.validate(doc, schema)
    assert unknown_fields(doc, schema) == []


def test_the_schema_check_can_fail() -> None:
    secret = OBJECTS[1]
    broken = json.loads(json.dumps(secret))
    broken["spec"]["target"]["creationPolicy"] = "Always"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMAS["ExternalSecret"])
    broken["spec"]["dataFrom"][0]["extract"]["name"] = ACME_SECRET  # a misspelt `key`
    assert unknown_fields(broken, SCHEMAS["ExternalSecret"]) == [".spec.dataFrom[0].extract.name"]


def test_the_store_is_secrets_manager_of_the_region_with_the_controllers_own_identity() -> None:
    store = OBJECTS[0]
    assert store["kind"] == "ClusterSecretStore"
    # No `auth`: the SDK's default credential chain, which finds EKS Pod Identity's (upstream docs/provider/aws-access.md).
    assert store["spec"]["provider"] == {"aws": {"service": "SecretsManager", "region": CONFIG.region}}
    # Served to Argo CD's namespace only (tests/test_tenant_boundaries.py judges it as ESO does).
    assert store["spec"]["conditions"] == [{"namespaces": [ARGOCD_NAMESPACE]}]


def test_a_repository_credential_is_an_argo_cd_repo_creds_secret_from_the_secrets_json() -> None:
    secret = OBJECTS[1]
    assert secret["metadata"] == {"name": "repo-creds-acme", "namespace": ARGOCD_NAMESPACE}
    spec = secret["spec"]
    assert spec["secretStoreRef"] == {"kind": "ClusterSecretStore", "name": OBJECTS[0]["metadata"]["name"]}
    assert spec["dataFrom"] == [{"extract": {"key": ACME_SECRET}}]  # every key of the secret's JSON object
    template = spec["target"]["template"]
    assert template["metadata"]["labels"] == REPO_CREDS_LABEL
    # The URL prefix beside the extracted fields: Merge keeps both (ESO docs/guides/templating.md, "MergePolicy").
    assert (template["mergePolicy"], template["data"]["url"]) == ("Merge", "https://github.com/acme/")
    assert spec["refreshInterval"] == REFRESH  # a rotated value arrives with no deploy


def test_the_role_may_read_each_secret_by_name_and_no_other() -> None:
    arns = secret_arns(materialised(CONFIG), partition="aws", region="eu-west-1", account_id="123456789012")
    # The repository credential and Argo CD's SSO client secret (the variant configures both).
    assert arns == [
        f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{name}-??????" for name in (ACME_SECRET, SSO_SECRET_NAME)
    ]


# --- in the synthesized stacks ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chains(variant_app: Synthesized) -> dict[str, Chain]:
    return {colour: build_chain(variant_app, colour) for colour in COLOURS}


def test_commons_role_reads_exactly_the_configured_secrets(variant_app: Synthesized) -> None:
    policy = variant_app.resource("common", "aws_iam_policy", "external-secrets-role/policy")
    (statement,) = json.loads(policy["policy"])["Statement"]
    assert statement["Resource"] == [
        "arn:${data.aws_partition.partition.partition}:secretsmanager:ap-northeast-1:"
        f"${{data.aws_caller_identity.account.account_id}}:secret:{name}-??????"
        for name in (ACME_SECRET, SSO_SECRET_NAME)
    ]
    assert sorted(statement["Action"]) == [
        "secretsmanager:DescribeSecret",
        "secretsmanager:GetResourcePolicy",
        "secretsmanager:GetSecretValue",
        "secretsmanager:ListSecretVersionIds",
    ]


def test_without_credentials_the_role_may_read_nothing(example_app: Synthesized, variant_app: Synthesized) -> None:
    public = validated({})
    assert secret_arns(materialised(public), partition="aws", region="r", account_id="1") == []
    assert "external-secrets-role/role" in variant_app.resources("common", "aws_iam_role")


@pytest.mark.parametrize("colour", COLOURS)
def test_terraform_bootstraps_eso_after_its_association_and_the_credentials_before_the_parent(
    variant_app: Synthesized, colour: str
) -> None:
    releases = variant_app.resources(colour, "helm_release")
    eso, secrets = releases["external-secrets/release"], releases["bootstrap-secrets/release"]
    parent = releases[f"{PARENT_APPLICATION}/release"]
    (association,) = [
        key
        for key, body in variant_app.json(colour)["resource"]["aws_eks_pod_identity_association"].items()
        if body["namespace"] == EXTERNAL_SECRETS.namespace
    ]
    assert f"aws_eks_pod_identity_association.{association}" in eso["depends_on"]
    assert (eso["chart"], eso["repository"]) == ("external-secrets", "https://charts.external-secrets.io")
    namespace = variant_app.resource(colour, "kubernetes_namespace_v1", "external-secrets/namespace")
    assert namespace["metadata"]["name"] == EXTERNAL_SECRETS.namespace
    assert eso["version"] == CONFIG.release(colour).platform.version(EXTERNAL_SECRETS)
    assert eso["lifecycle"]["ignore_changes"] == ARGO_CD_SELF_MANAGED  # its child manages it from Git afterwards
    assert any(ref.startswith("helm_release.external-secrets_release") for ref in secrets["depends_on"])
    assert any(ref.startswith("helm_release.bootstrap-secrets_release") for ref in parent["depends_on"])
    assert values_of_release(secrets) == {"manifests": OBJECTS}


@pytest.mark.parametrize("colour", COLOURS)
def test_the_app_of_apps_renders_the_objects_terraform_applied(chains: dict[str, Chain], colour: str) -> None:
    chain = chains[colour]
    assert chain.root_values["externalSecrets"] == OBJECTS
    rendered = [doc for doc in chain.apps_manifests if doc["apiVersion"].startswith("external-secrets.io/")]
    assert rendered == OBJECTS


@pytest.mark.parametrize("colour", COLOURS)
def test_esos_child_names_the_associated_service_account_and_applies_its_crds_server_side(
    chains: dict[str, Chain], colour: str
) -> None:
    child = chains[colour].children[EXTERNAL_SECRETS.name]
    assert child["metadata"].get("finalizers") is None  # the teardown leaves it, and Argo CD's credentials, running
    values = child["spec"]["source"]["helm"]["valuesObject"]
    assert (EXTERNAL_SECRETS.namespace, values["serviceAccount"]["name"]) in chains[colour].associations
    assert values["crds"]["annotations"] == {"argocd.argoproj.io/sync-options": "ServerSideApply=true"}
    # What Terraform starts it with is what the child keeps: no restart of the controller when Argo CD takes over.
    from model.bootstrap import EXTERNAL_SECRETS_VALUES

    assert {key: values[key] for key in EXTERNAL_SECRETS_VALUES} == EXTERNAL_SECRETS_VALUES


def test_an_older_terraforms_facts_render_no_secret_objects(chains: dict[str, Chain]) -> None:
    facts = {key: value for key, value in chains[COLOURS[0]].root_values.items() if key != "externalSecrets"}
    docs = render("apps", facts, release="apps", namespace=ARGOCD_NAMESPACE)
    assert by_kind(docs, "ExternalSecret") == {}
    assert by_kind(docs, "Application")  # the rest still renders


def test_no_stack_makes_a_kubernetes_secret(variant_app: Synthesized, chains: dict[str, Chain]) -> None:
    """Terraform never writes a credential: no Secret resource in any stack, no Secret among the objects it applies or
    the App of Apps renders; ESO makes them in the cluster. (A real value kept out: the emulator rehearsal.)"""
    for stack in variant_app.stacks():
        assert not [kind for kind in variant_app.json(stack).get("resource", {}) if "secret" in kind], stack
    for chain in chains.values():
        assert by_kind(chain.apps_manifests, "Secret") == {}
        assert [doc["kind"] for doc in chain.bootstrap_values["manifests"]] == ["AppProject", "Application"]


def test_the_sso_client_secret_becomes_the_key_argo_cds_oidc_config_names() -> None:
    """Argo CD's SSO client secret goes the same way (model/argocd_access.py): its plain value, whole, under the key
    `clientSecret: $<secret>:<key>` names, in a Secret Argo CD may read (labelled part-of argocd)."""
    (external,) = [
        doc for doc in manifests(materialised(CONFIG), region=CONFIG.region) if doc["metadata"]["name"] == SSO_CLIENT_SECRET
    ]
    assert external["metadata"]["namespace"] == ARGOCD_NAMESPACE
    assert external["spec"]["data"] == [{"secretKey": SSO_CLIENT_SECRET_KEY, "remoteRef": {"key": SSO_SECRET_NAME}}]
    assert "dataFrom" not in external["spec"]
    assert external["spec"]["target"]["template"]["metadata"]["labels"] == {"app.kubernetes.io/part-of": "argocd"}
    oidc = argocd_facts(CONFIG)["sso"]["clientSecret"]
    assert oidc == f"${SSO_CLIENT_SECRET}:{SSO_CLIENT_SECRET_KEY}"
