"""A private repository's credential, rehearsed as far as this machine allows: the Secrets Manager secret made in the
AWS emulator (moto) the way an organisation makes it, the role common synthesizes allowed to read it and no other
secret, the ExternalSecret the colours render pointing at it, and its value nowhere in cdktf.out or the facts.

Not here: ESO reading it (no cluster), and a Terraform state (synth applies nothing; the state holds what the
stacks hold, and they hold the name only).
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest

from model.external_secrets import manifests, materialised
from model.loading import config_from_dict
from tests.support.charts import build_chain
from tests.support.configs import ACME_SECRET, VARIANT
from tests.support.emulated_aws import Emulated
from tests.support.synth import Synthesized

CONFIG = config_from_dict(VARIANT)
# What an organisation stores (a GitHub App's fields, Argo CD's names): strings that must never leave Secrets Manager.
VALUE = {
    "githubAppID": "918273",
    "githubAppInstallationID": "56473829",
    "githubAppPrivateKey": "-----BEGIN RSA PRIVATE KEY-----\nrehearsal-only-7f3a9c\n-----END RSA PRIVATE KEY-----\n",
}


@pytest.fixture(scope="module")
def secrets(emulated_clients: Emulated) -> dict[str, Any]:
    """The credential's secret, and a neighbour whose name only starts like it, in the emulated account."""
    import boto3

    client = boto3.client("secretsmanager", region_name=CONFIG.region)
    made = {name: client.create_secret(Name=name, SecretString=json.dumps(VALUE)) for name in (ACME_SECRET, f"{ACME_SECRET}-old")}
    return {name: answer["ARN"] for name, answer in made.items()}


def granted(variant_app: Synthesized, account: str) -> list[str]:
    """The ESO role's resources as IAM sees them once Terraform fills partition and account."""
    policy = variant_app.resource("common", "aws_iam_policy", "external-secrets-role/policy")
    (statement,) = json.loads(policy["policy"])["Statement"]
    return [
        arn.replace("${data.aws_partition.partition.partition}", "aws").replace(
            "${data.aws_caller_identity.account.account_id}", account
        )
        for arn in statement["Resource"]
    ]


def test_the_role_may_read_the_credentials_secret_and_not_its_neighbour(
    variant_app: Synthesized, secrets: dict[str, str]
) -> None:
    account = secrets[ACME_SECRET].split(":")[4]
    patterns = granted(variant_app, account)
    # IAM's `?` is one character, as fnmatch's: the six random characters Secrets Manager appended.
    assert any(fnmatch.fnmatchcase(secrets[ACME_SECRET], p) for p in patterns)
    assert not any(fnmatch.fnmatchcase(secrets[f"{ACME_SECRET}-old"], p) for p in patterns)


def test_the_rendered_external_secret_points_at_the_secret(variant_app: Synthesized, secrets: dict[str, str]) -> None:
    import boto3

    client = boto3.client("secretsmanager", region_name=CONFIG.region)
    chain = build_chain(variant_app, "green")
    (external,) = [doc for doc in chain.apps_manifests if doc["kind"] == "ExternalSecret" and "dataFrom" in doc["spec"]]
    (source,) = external["spec"]["dataFrom"]
    assert client.describe_secret(SecretId=source["extract"]["key"])["ARN"] == secrets[ACME_SECRET]
    store = next(doc for doc in chain.apps_manifests if doc["kind"] == "ClusterSecretStore")
    assert store["spec"]["provider"]["aws"]["region"] == CONFIG.region  # where the secret was made
    assert external in manifests(materialised(CONFIG), region=CONFIG.region)


def test_the_value_is_nowhere_in_cdktf_out_or_the_facts(variant_app: Synthesized, secrets: dict[str, str]) -> None:
    written = [path for path in variant_app.outdir.rglob("*") if path.is_file()]
    assert written
    found = [str(path) for path in written for text in [path.read_bytes()] for part in VALUE.values() if part.encode() in text]
    assert found == []
    facts = json.dumps([build_chain(variant_app, colour).root_values for colour in CONFIG.clusters])
    assert ACME_SECRET in facts  # the name travels
    assert not any(part in facts for part in VALUE.values())
