"""Terraform plans this release's common against the state the release before left (a background check,
tests/support/background_checks.py): tests/fixtures/previous-release/common-sample-app.tf.json, the part of common that
release made for its one application (its role, policy and attachment, the table, the image repository and its
lifecycle policy, written by that release's own code), is applied to the AWS emulator; its role's trust is then set
to the one every release from #31 to #44 deployed (with `aws:SourceAccount`, policies/pod_identity_trust.json at
TRUST_PINNED_ACCOUNT), as their deploys of common left it; then this release's common, as synthesized, is planned
against that state. It runs on a thread: everything it needs is passed in."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import policies
from model.revisions import files_at
from scripts.emulator import client
from tests.support.terraform import run

BEFORE = Path(__file__).parent.parent / "fixtures" / "previous-release" / "common-sample-app.tf.json"
REGION = "ap-northeast-1"
PARENT_ZONE = "example.com"  # the example's dns.parent_zone: common looks it up
# The last commit whose shared Pod Identity trusts required aws:SourceAccount (dropped by #45); a clone has it.
TRUST_PINNED_ACCOUNT = "92ac491"
# The sample app's role in the fixture: its name, and what its trust binds (the example's project and application).
ROLE, NAMESPACE, SERVICE_ACCOUNT, CLUSTER_NAMES = "eks-bg-sample-app", "sample-app", "sample-app", "eks-bg-*"


def trust_with_account(account: str) -> str:
    """The sample app's trust as common wrote it from #31 to #44, filled for `account`."""
    folder = files_at(TRUST_PINNED_ACCOUNT, "policies", key="the release-upgrade check's trust")
    return policies.render(
        folder / "pod_identity_trust.json",
        NAMESPACE=NAMESPACE,
        SERVICE_ACCOUNT=SERVICE_ACCOUNT,
        ACCOUNT_ID=account,
        CLUSTER_NAMES=CLUSTER_NAMES,
    )


def plan_upgrade(directory: Path, common: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    """`terraform show -json` of this release's common planned against the release before's state."""
    route53 = client("route53", env["AWS_ENDPOINT_URL"], REGION)
    # The emulator is this check's own (tests/support/background_checks.py own_emulator): nobody else made the zone.
    route53.create_hosted_zone(Name=PARENT_ZONE, CallerReference="release-upgrade")

    def terraform(where: Path, *arguments: str) -> str:
        done = run(where, *arguments, "-input=false", "-no-color", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    before, after = directory / "before", directory / "after"
    before.mkdir()
    shutil.copy(BEFORE, before / "main.tf.json")
    terraform(before, "init")
    terraform(before, "apply", "-auto-approve")
    account = client("sts", env["AWS_ENDPOINT_URL"], REGION).get_caller_identity()["Account"]
    client("iam", env["AWS_ENDPOINT_URL"], REGION).update_assume_role_policy(
        RoleName=ROLE, PolicyDocument=trust_with_account(account)
    )
    document = json.loads(json.dumps(common))
    document["terraform"].pop("backend")  # the default local state: the one copied in
    after.mkdir()
    (after / "main.tf.json").write_text(json.dumps(document))
    shutil.copy(before / "terraform.tfstate", after / "terraform.tfstate")
    terraform(after, "init")
    terraform(after, "plan", "-lock=false", "-out=upgrade.plan")
    shown: dict[str, Any] = json.loads(run(after, "show", "-json", "upgrade.plan", env=env).stdout)
    return shown
