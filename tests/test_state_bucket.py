"""`python -m tools.state_bucket`: the Terraform state bucket created with every setting, found and left alone on a
second run, a drifted setting repaired and reported, and refusals that name what failed; in moto."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from model.loading import load_config
from model.paths import PROJECT_DIR
from tests.support.configs import write_project
from tests.support.emulated_aws import REGION, base_config, in_process_aws
from tests.test_deployer_commands import command_calls
from tools import state_bucket
from tools.aws import Aws

BUCKET = "eks-bg-tfstate-123456789012-ap-northeast-1"  # the default name: moto's account and the config's region
OTHER_ACCOUNT = "222222222222"


@pytest.fixture(scope="module")
def s3_clients() -> Iterator[dict[str, Any]]:
    with pytest.MonkeyPatch.context() as patch, in_process_aws(patch):
        yield {name: boto3.client(name, region_name=REGION) for name in ("s3", "sts")}


@pytest.fixture
def s3(s3_clients: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield s3_clients
    from moto.backends import get_backend

    get_backend("s3").reset()


def run(project: Path, clients: dict[str, Any], *extra: str) -> int:
    return state_bucket.main(["--config", str(project), *extra], aws=lambda region: Aws(region, **clients))


def settings_of(s3: Any, bucket: str = BUCKET) -> dict[str, Any]:
    """What S3 holds, read directly (not through the command)."""
    policy = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])
    return {
        "versioning": s3.get_bucket_versioning(Bucket=bucket).get("Status"),
        "encryption": s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0][
            "ApplyServerSideEncryptionByDefault"
        ]["SSEAlgorithm"],
        "public": s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"],
        "ownership": s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"],
        "tls": [(s["Effect"], s.get("Condition")) for s in policy["Statement"]],
        "lifecycle": [
            (r["ID"], r["Status"], r["NoncurrentVersionExpiration"]["NoncurrentDays"])
            for r in s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
        ],
        "region": s3.get_bucket_location(Bucket=bucket)["LocationConstraint"],
    }


EXPECTED: dict[str, Any] = {
    "versioning": "Enabled",
    "encryption": "AES256",
    "public": {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True},
    "ownership": [{"ObjectOwnership": "BucketOwnerEnforced"}],
    "tls": [("Deny", {"Bool": {"aws:SecureTransport": "false"}})],
    "lifecycle": [("terraform-state-history", "Enabled", 90)],
    "region": REGION,
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path, base_config(blue={"kubernetes_version": "1.35", "weight": 100}), in_file=True)


def test_creates_the_bucket_with_every_setting_and_prints_the_state_block(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(project, s3) == 0
    assert settings_of(s3["s3"]) == EXPECTED
    out = capsys.readouterr().out
    assert f"s3://{BUCKET} ({REGION}, account 123456789012): created" in out
    assert "  versioning: set to Enabled" in out
    printed = json.loads(out[out.index("{") :])
    assert printed == {"state": {"backend": "s3", "bucket": BUCKET, "region": REGION, "key_prefix": "eks-bg"}}


def test_a_second_run_changes_nothing_and_says_each_setting_is_right(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(project, s3) == 0
    capsys.readouterr()
    assert run(project, s3) == 0
    out = capsys.readouterr().out
    assert "account 123456789012): found" in out
    reported = re.findall(r"^  ([a-z ]+): .*\((ok)\)$", out, flags=re.M)
    assert reported == [(s.name, "ok") for s in state_bucket.settings("aws", BUCKET)]
    assert "repaired" not in out
    assert settings_of(s3["s3"]) == EXPECTED


def test_drifted_settings_are_repaired_and_reported(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    client = s3["s3"]
    assert run(project, s3) == 0
    client.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Suspended"})
    client.delete_public_access_block(Bucket=BUCKET)
    other = {
        "Sid": "Theirs",
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:DeleteBucket",
        "Resource": f"arn:aws:s3:::{BUCKET}",
    }
    client.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps({"Version": "2012-10-17", "Statement": [other]}))
    capsys.readouterr()
    assert run(project, s3) == 0
    out = capsys.readouterr().out
    assert "  versioning: was Suspended, repaired: Enabled" in out
    assert "  public access block: was unset, repaired: all four on" in out
    assert "  bucket policy: was unset, repaired: denies non-TLS requests" in out
    assert "  default encryption: AES256 (ok)" in out
    held = settings_of(client)
    assert held["versioning"] == "Enabled"
    assert held["public"] == EXPECTED["public"]
    assert held["tls"][-1] == EXPECTED["tls"][0]
    statements = json.loads(client.get_bucket_policy(Bucket=BUCKET)["Policy"])["Statement"]
    assert [s.get("Sid") for s in statements] == ["Theirs", state_bucket.TLS_ONLY]  # the other statement is kept


def test_write_sets_the_state_block_in_the_config_and_nothing_else(project: Path, s3: dict[str, Any]) -> None:
    config_file = project.parent / "config.json"
    before = config_file.read_text()
    assert run(project, s3, "--write") == 0
    after = config_file.read_text()
    assert after.startswith(before.rstrip()[:-1].rstrip())  # every byte before the new setting is as it was
    state = load_config(project).state
    assert (state.backend, state.bucket, state.region, state.key_prefix) == ("s3", BUCKET, REGION, "eks-bg")
    assert run(project, s3, "--write", "--key-prefix", "team") == 0  # the setting exists now: replaced in place
    assert load_config(project).state.key_prefix == "team"
    assert config_file.read_text().count('"state"') == 1


def test_write_refuses_a_state_block_the_config_would_refuse_before_creating_anything(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """It created the bucket and then refused to write the block: the configuration is checked first now."""
    config_file = project.parent / "config.json"
    before = config_file.read_text()
    assert run(project, s3, "--write", "--key-prefix", "/team/") == 2
    printed = capsys.readouterr()
    assert "state.key_prefix: \"/team/\" is not allowed; use a key prefix without a leading or trailing '/'" in printed.err
    assert "created" not in printed.out
    assert s3["s3"].list_buckets()["Buckets"] == []
    assert config_file.read_text() == before


def test_a_name_another_account_took_meanwhile_is_refused(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Absent when checked, taken by another account before CreateBucket: S3 says BucketAlreadyExists."""
    assumed(s3["sts"], OTHER_ACCOUNT).create_bucket(Bucket="taken-name", CreateBucketConfiguration={"LocationConstraint": REGION})
    client = s3["s3"]

    class AbsentAtFirst:
        exceptions = client.exceptions

        def head_bucket(self, **call: Any) -> Any:
            raise ClientError({"Error": {"Code": "404", "Message": "Not Found"}}, "HeadBucket")

        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

    assert run(project, {**s3, "s3": AbsentAtFirst()}, "--bucket", "taken-name") == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: the name taken-name is taken by another account (bucket names are global): choose")


def test_a_bucket_of_another_account_is_refused_before_anything_is_written(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    class OtherOwner:
        """S3 as it answers a HeadBucket whose ExpectedBucketOwner is not the bucket's owner (moto does not check it)."""

        exceptions = s3["s3"].exceptions

        def head_bucket(self, **call: Any) -> Any:
            raise ClientError({"Error": {"Code": "403", "Message": "Forbidden"}}, "HeadBucket")

        def __getattr__(self, name: str) -> Any:
            raise AssertionError(f"{name} called on another account's bucket")

    assert run(project, {**s3, "s3": OtherOwner()}, "--bucket", "their-bucket") == 2
    assert capsys.readouterr().err.startswith(
        "refused: bucket their-bucket exists but is not this account's (123456789012), or this identity may not read it"
    )


@pytest.mark.parametrize("denied", ["CreateBucket", "PutBucketVersioning"])
def test_run_as_the_deployer_it_says_whose_step_it_is(
    project: Path, s3: dict[str, Any], capsys: pytest.CaptureFixture[str], denied: str
) -> None:
    """The deployer's policies hold none of the bucket's actions: refused at the create (nothing made), or failed at the
    first setting of a bucket that exists (what is in place was reported); either way it names whose step it is."""
    client = s3["s3"]
    if denied == "PutBucketVersioning":
        client.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})

    class AsTheDeployer:
        exceptions = client.exceptions

        def __getattr__(self, name: str) -> Any:
            if "".join(part.title() for part in name.split("_")) == denied:

                def refuse(**call: Any) -> Any:
                    raise ClientError({"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, denied)

                return refuse
            return getattr(client, name)

    assert run(project, {**s3, "s3": AsTheDeployer()}, "--bucket", BUCKET) == (2 if denied == "CreateBucket" else 1)
    err = capsys.readouterr().err
    assert err.startswith("refused: s3://" if denied == "CreateBucket" else "failed: s3://"), err
    assert err.rstrip().endswith(state_bucket.ADMIN_ONLY), err
    assert "the deployer's policies (python -m policies.deployer) hold none of its actions" in err


@pytest.mark.usefixtures("no_aws_credentials")
def test_without_credentials_it_says_log_in(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert state_bucket.main(["--config", str(project)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: no usable AWS credentials (")
    assert "nothing was changed" in err


def test_the_documented_actions_are_the_calls_it_makes() -> None:
    """tools/README.md lists the IAM actions an administrator needs for it; the code's calls, mapped to their actions
    (Service Authorization Reference, Amazon S3: several S3 operations are authorized by an action of another name)."""
    iam_action = {
        "s3:HeadBucket": "s3:ListBucket",
        "s3:GetBucketEncryption": "s3:GetEncryptionConfiguration",
        "s3:PutBucketEncryption": "s3:PutEncryptionConfiguration",
        "s3:GetPublicAccessBlock": "s3:GetBucketPublicAccessBlock",
        "s3:PutPublicAccessBlock": "s3:PutBucketPublicAccessBlock",
        "s3:GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
        "s3:PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
    }
    # The scan takes tools/aws.py's Aws class whole, whose kube() calls EKS; this command uses its S3 and STS only.
    calls = command_calls(PROJECT_DIR, "tools", "tools.state_bucket")
    made = {iam_action.get(call, call) for call in calls if call.split(":")[0] in ("s3", "sts")}
    readme = (PROJECT_DIR / "tools" / "README.md").read_text()
    documented = set(re.search(r"<!-- state-bucket-actions -->\n(.*?)\n<!--", readme, flags=re.S)[1].replace("`", "").split(", "))  # type: ignore[index]
    assert documented == made


def assumed(sts: Any, account: str) -> Any:
    """An S3 client acting as another account (moto takes the account from the assumed role's credentials)."""
    creds = sts.assume_role(RoleArn=f"arn:aws:iam::{account}:role/admin", RoleSessionName="other")["Credentials"]
    keys = {"aws_access_key_id": creds["AccessKeyId"], "aws_secret_access_key": creds["SecretAccessKey"]}
    return boto3.client("s3", region_name=REGION, aws_session_token=creds["SessionToken"], **keys)
