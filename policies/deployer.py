"""The IAM policy the identity that runs `cdktf deploy` needs, filled for this project:

    .venv/bin/python -m policies.deployer --account 123456789012 > deployer-policy.json

Reads project, region and state backend from cdktf.json; the S3 statements are left out with the
local backend. The document (policies/deployer.json) passes the same IAM lint as the others
(tests/test_policies.py). It also covers the operator commands: the shift's and the teardown's
reads (Route53, ELBv2, CloudWatch metrics, EKS insights).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import policies
from model.config import Config
from model.loading import ConfigError, load_config

S3_STATEMENTS = {"StateInS3WhenConfigured", "ListTheStateBucket"}


def partition(region: str) -> str:
    return "aws-cn" if region.startswith("cn-") else "aws-us-gov" if region.startswith("us-gov-") else "aws"


def deployer_policy(config: Config, account: str) -> str:
    values = {
        "ACCOUNT_ID": account,
        "PARTITION": partition(config.region),
        "PROJECT": config.project,
        "REGION": config.region,
        "STATE_BUCKET": config.state.bucket or "unused",
        "STATE_KEY_PREFIX": config.state.key_prefix,
    }
    document = json.loads(policies.render("deployer", **values))
    if config.state.backend != "s3":
        document["Statement"] = [s for s in document["Statement"] if s["Sid"] not in S3_STATEMENTS]
    return json.dumps(document, indent=2)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m policies.deployer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--account", required=True, help="the AWS account ID (12 digits)")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)
    if not (len(args.account) == 12 and args.account.isdigit()):
        print(f"--account: {args.account!r} is not allowed; use the 12-digit account ID", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    print(deployer_policy(config, args.account))
    return 0


if __name__ == "__main__":
    sys.exit(main())
