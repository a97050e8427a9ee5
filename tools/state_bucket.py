"""Create, or check and repair, the S3 bucket that holds a team's Terraform state: `python -m tools.state_bucket`.

A one-time step of an account administrator (like the permissions boundary, not the deployer's): run it again at any
time and it finds the bucket, checks each setting and repairs one that drifted, saying which. It prints the config's
`state` block for the bucket, or with `--write` sets it in the config. Locking needs nothing more: the stacks use
S3's native lock file (stacks/base.py `use_lockfile`), no DynamoDB table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import policies
from model.loading import ConfigError, check_state, load_config, write_state
from tools.aws import Aws
from tools.aws_problems import aws_errors_as, aws_problem, error_code
from tools.cli import exit_status

# SSE-S3, not SSE-KMS: Terraform's s3 backend with `encrypt` (the config's default) and no KMS key asks for AES256 on
# every object it writes, the state, its digest and the lock file (hashicorp/terraform,
# internal/backend/remote-state/s3/client.go, PutObject), so a KMS default would describe objects that do not exist.
# The AWS managed key would add only CloudTrail records of its use: its policy cannot be edited, so it restricts nobody.
ENCRYPTION = "AES256"
OWNERSHIP = "BucketOwnerEnforced"  # ACLs off: the account owns every object, whoever wrote it
PUBLIC_ACCESS_BLOCK = {
    name: True for name in ("BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets")
}
TLS_ONLY = "DenyInsecureTransport"  # the Sid of policies/state_bucket.json's statement
# Who runs it, said wherever AWS refuses a call: the deployer may read and write state objects, never the bucket's
# settings (a deployer that could loosen them could make the state public or drop its versions).
ADMIN_ONLY = (
    "run it as an administrator of the account: the state bucket is an administrator's one-time step, and the "
    "deployer's policies (python -m policies.deployer) hold none of its actions, on purpose (tools/README.md lists them)"
)
# A state's history for 90 days: long enough to find and restore the state before a bad apply after a quarter's
# holidays, short enough that a colour's year of applies (and the lock files each run leaves as noncurrent versions)
# does not pile up. The current version of every state never expires.
NONCURRENT_DAYS = 90
LIFECYCLE_RULE = {
    "ID": "terraform-state-history",
    "Status": "Enabled",
    "Filter": {},
    "NoncurrentVersionExpiration": {"NoncurrentDays": NONCURRENT_DAYS},
    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
}


class StateBucketError(Exception):
    """The bucket cannot be used (taken, another account's, elsewhere); nothing was changed."""


class StateBucketFailedError(Exception):
    """A step failed after the bucket existed: what is in place is said; running the command again completes it."""


@dataclass(frozen=True)
class Setting:
    """One setting of the bucket: how to read it (a short description, None when unset), whether that is right, and
    how to make it right."""

    name: str
    read: Callable[[Any, dict[str, str]], str | None]
    right: Callable[[str | None], bool]
    write: Callable[[Any, dict[str, str]], None]
    wanted: str


def _unset(s3: Any, call: Callable[[], Any], *codes: str) -> Any:
    """call()'s answer, or None when S3 says the setting is not configured (codes)."""
    try:
        return call()
    except s3.exceptions.ClientError as err:
        if error_code(err) in codes:
            return None
        raise


def _versioning(s3: Any, at: dict[str, str]) -> str | None:
    status: str | None = s3.get_bucket_versioning(**at).get("Status")
    return status


def _encryption(s3: Any, at: dict[str, str]) -> str | None:
    found = _unset(s3, lambda: s3.get_bucket_encryption(**at), "ServerSideEncryptionConfigurationNotFoundError")
    rules = found["ServerSideEncryptionConfiguration"]["Rules"] if found else []
    return rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] if rules else None


def _public_access(s3: Any, at: dict[str, str]) -> str | None:
    found = _unset(s3, lambda: s3.get_public_access_block(**at), "NoSuchPublicAccessBlockConfiguration")
    if found is None:
        return None
    held = found["PublicAccessBlockConfiguration"]
    return ", ".join(f"{name} {held.get(name, False)}" for name in PUBLIC_ACCESS_BLOCK)


def _ownership(s3: Any, at: dict[str, str]) -> str | None:
    found = _unset(s3, lambda: s3.get_bucket_ownership_controls(**at), "OwnershipControlsNotFoundError")
    return found["OwnershipControls"]["Rules"][0]["ObjectOwnership"] if found else None


def _statements(s3: Any, at: dict[str, str]) -> list[dict[str, Any]]:
    found = _unset(s3, lambda: s3.get_bucket_policy(**at), "NoSuchBucketPolicy")
    return list(json.loads(found["Policy"])["Statement"]) if found else []


def _tls_statement(partition: str, bucket: str) -> dict[str, Any]:
    document = json.loads(policies.render("state_bucket", PARTITION=partition, STATE_BUCKET=bucket))
    return dict(document["Statement"][0])


def _same_statement(held: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """S3 may hand a policy back reformatted: compare what the statement means."""

    def meaning(statement: dict[str, Any]) -> tuple[Any, ...]:
        listed = [statement.get(key) for key in ("Action", "Resource")]
        as_sets = [frozenset([v] if isinstance(v, str) else v or []) for v in listed]
        return (statement.get("Effect"), statement.get("Principal"), *as_sets, json.dumps(statement.get("Condition")))

    return meaning(held) == meaning(wanted)


def _lifecycle_rules(s3: Any, at: dict[str, str]) -> list[dict[str, Any]]:
    found = _unset(s3, lambda: s3.get_bucket_lifecycle_configuration(**at), "NoSuchLifecycleConfiguration")
    return list(found["Rules"]) if found else []


def _describe_rule(rule: dict[str, Any] | None) -> str | None:
    if rule is None:
        return None
    days = rule.get("NoncurrentVersionExpiration", {}).get("NoncurrentDays")
    return f"{rule.get('Status')}, noncurrent versions expire after {days} days"


def _our_rule(rules: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((rule for rule in rules if rule.get("ID") == LIFECYCLE_RULE["ID"]), None)


def settings(partition: str, bucket: str) -> list[Setting]:
    """Every setting the state bucket must have, in the order they are checked."""
    statement = _tls_statement(partition, bucket)

    def policy_read(s3: Any, at: dict[str, str]) -> str | None:
        held = next((s for s in _statements(s3, at) if s.get("Sid") == TLS_ONLY), None)
        return None if held is None else ("denies non-TLS requests" if _same_statement(held, statement) else "changed")

    def policy_write(s3: Any, at: dict[str, str]) -> None:  # keeps every other statement of the bucket's policy
        others = [s for s in _statements(s3, at) if s.get("Sid") != TLS_ONLY]
        s3.put_bucket_policy(**at, Policy=json.dumps({"Version": "2012-10-17", "Statement": [*others, statement]}))

    def lifecycle_write(s3: Any, at: dict[str, str]) -> None:  # keeps the bucket's other rules
        others = [r for r in _lifecycle_rules(s3, at) if r.get("ID") != LIFECYCLE_RULE["ID"]]
        s3.put_bucket_lifecycle_configuration(**at, LifecycleConfiguration={"Rules": [*others, LIFECYCLE_RULE]})

    encryption = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": ENCRYPTION}}]}
    return [
        Setting(
            "versioning",
            _versioning,
            lambda held: held == "Enabled",
            lambda s3, at: s3.put_bucket_versioning(**at, VersioningConfiguration={"Status": "Enabled"}),
            "Enabled",
        ),
        Setting(
            "default encryption",
            _encryption,
            # A KMS key someone chose is at least as strong: kept, not replaced by SSE-S3.
            lambda held: held in (ENCRYPTION, "aws:kms", "aws:kms:dsse"),
            lambda s3, at: s3.put_bucket_encryption(**at, ServerSideEncryptionConfiguration=encryption),
            ENCRYPTION,
        ),
        Setting(
            "public access block",
            _public_access,
            lambda held: held == ", ".join(f"{name} True" for name in PUBLIC_ACCESS_BLOCK),
            lambda s3, at: s3.put_public_access_block(**at, PublicAccessBlockConfiguration=PUBLIC_ACCESS_BLOCK),
            "all four on",
        ),
        Setting(
            "object ownership",
            _ownership,
            lambda held: held == OWNERSHIP,
            lambda s3, at: s3.put_bucket_ownership_controls(**at, OwnershipControls={"Rules": [{"ObjectOwnership": OWNERSHIP}]}),
            OWNERSHIP,
        ),
        Setting(
            "bucket policy", policy_read, lambda held: held == "denies non-TLS requests", policy_write, "denies non-TLS requests"
        ),
        Setting(
            "lifecycle",
            lambda s3, at: _describe_rule(_our_rule(_lifecycle_rules(s3, at))),
            lambda held: held == _describe_rule(LIFECYCLE_RULE),
            lifecycle_write,
            str(_describe_rule(LIFECYCLE_RULE)),
        ),
    ]


def ensure_bucket(s3: Any, sts: Any, *, bucket: str, region: str, say: Callable[[str], None]) -> None:
    """Create the bucket in this account if it is absent, then check every setting and repair each one that is wrong,
    saying what each was. Refuses (StateBucketError) a bucket of another account, or in another region."""
    identity = sts.get_caller_identity()
    account, partition = identity["Account"], identity["Arn"].split(":")[1]
    # Every call names the expected owner: S3 refuses it (403) when the bucket belongs to another account, so nothing
    # is ever read from or written to a bucket that merely has the name.
    at = {"Bucket": bucket, "ExpectedBucketOwner": account}
    created = _create_if_absent(s3, at, region)
    say(f"s3://{bucket} ({region}, account {account}): {'created' if created else 'found'}")
    for setting in settings(partition, bucket):

        def failed(said: str, name: str = setting.name) -> StateBucketFailedError:
            return _failed_at(bucket, name, said)

        with aws_errors_as(failed, needs=ADMIN_ONLY):
            held = setting.read(s3, at)
            if setting.right(held):
                say(f"  {setting.name}: {held} (ok)")
                continue
            setting.write(s3, at)
        done = "set to" if created else f"was {held or 'unset'}, repaired:"
        say(f"  {setting.name}: {done} {setting.wanted}")


def _create_if_absent(s3: Any, at: dict[str, str], region: str) -> bool:
    """True when the bucket was created now; False when this account already has it."""
    bucket = at["Bucket"]
    try:
        head = s3.head_bucket(**at)
    except s3.exceptions.ClientError as err:
        if _denied(err):
            raise StateBucketError(
                f"bucket {bucket} exists but is not this account's ({at['ExpectedBucketOwner']}), or this identity may not "
                "read it: choose another name with --bucket, or run as an administrator of the account that owns it"
            ) from None
        if error_code(err) not in ("404", "NoSuchBucket", "NotFound"):
            raise
    else:
        held_in = head.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("x-amz-bucket-region", region)
        if held_in != region:
            raise StateBucketError(f"bucket {bucket} is in {held_in}, not {region}: run again with --region {held_in}")
        return False
    # us-east-1 takes no location constraint (S3 API reference, CreateBucket).
    where = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    try:
        s3.create_bucket(Bucket=bucket, ObjectOwnership=OWNERSHIP, **where)
    except s3.exceptions.BucketAlreadyExists:
        raise StateBucketError(
            f"the name {bucket} is taken by another account (bucket names are global): choose another with --bucket"
        ) from None
    except s3.exceptions.BucketAlreadyOwnedByYou:  # made by another run since the check
        return False
    except s3.exceptions.ClientError as err:
        if not _denied(err):
            raise
        raise StateBucketError(f"s3://{bucket} could not be created: {aws_problem(err, needs=ADMIN_ONLY)}") from None
    return True


def _denied(err: Any) -> bool:
    """S3 refused the call to this identity (a HeadBucket answers a bare 403, having no body to name a code)."""
    return error_code(err) in ("403", "AccessDenied", "Forbidden")


def _failed_at(bucket: str, setting: str, said: str) -> StateBucketFailedError:
    return StateBucketFailedError(
        f"s3://{bucket} exists, but its {setting} could not be checked or set; the settings reported above are in place. {said}"
    )


def default_bucket(project: str, account: str, region: str) -> str:
    """Bucket names are global: the account and region make the project's name one nobody else holds."""
    return f"{project}-tfstate-{account}-{region}"


def state_block(*, bucket: str, region: str, key_prefix: str) -> dict[str, str]:
    """The config's `state` setting for the bucket (model/config/ StateConfig)."""
    return {"backend": "s3", "bucket": bucket, "region": region, "key_prefix": key_prefix}


def main(argv: Sequence[str] | None = None, *, aws: Callable[[str], Aws] = Aws) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.state_bucket", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bucket", help="the bucket's name (default: the config's state.bucket, else <project>-tfstate-<account>-<region>)"
    )
    parser.add_argument("--region", help="the bucket's region (default: the config's state.region, else its region)")
    parser.add_argument(
        "--key-prefix", help="state keys are <key-prefix>/<stack>.tfstate (default: the config's, else <project>)"
    )
    parser.add_argument("--write", action="store_true", help="set the `state` block in the config instead of printing it")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)

    def run() -> None:
        config = load_config(args.config)
        region = args.region or config.state.region
        session = aws(region)
        account = session.sts.get_caller_identity()["Account"]
        configured = config.state.bucket if config.state.backend == "s3" else ""
        bucket = args.bucket or configured or default_bucket(config.project, account, region)
        if not 3 <= len(bucket) <= 63:
            raise StateBucketError(f"--bucket {bucket!r} has {len(bucket)} characters; S3 allows 3-63: name a shorter one")
        block = state_block(bucket=bucket, region=region, key_prefix=args.key_prefix or config.state.key_prefix)
        if args.write:  # a configuration the block would make invalid is refused before any bucket exists
            check_state(args.config, block)
        ensure_bucket(session.s3, session.sts, bucket=bucket, region=region, say=print)
        if args.write:
            written = write_state(args.config, block)
            print(
                f"written: state in {written}; then `cdktf synth`, and for a stack whose state is still local "
                "`terraform init -migrate-state` in its directory (tools/README.md)"
            )
        else:
            print('the config\'s "state" (or run again with --write):\n' + json.dumps({"state": block}, indent=2))

    return exit_status(run, refused=(StateBucketError, ConfigError), failed=(StateBucketFailedError,))


if __name__ == "__main__":
    sys.exit(main())
