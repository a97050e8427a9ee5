"""Destroy an old colour once it serves nothing: `python -m tools.retire blue [--force] [--auto-approve]`.

Checks, before the slow part, that the colour has weight 0 in the config and in Route53, then runs
`cdktf destroy <colour>`. The stack's own teardown hook (tools/teardown.py) checks again and
removes the apps, load balancer and records first, so a plain `cdktf destroy blue` is just as
safe; this command adds `--force`, for a colour that must go although it still has weight.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from model.loading import ConfigError, load_config
from model.teardown_plan import FORCE_ENV, TeardownPlan, teardown_plan
from tools.aws import colour_weight, find_zone
from tools.cli import exit_status, run_cdktf
from tools.teardown import UnsafeTeardownError, check_weight


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.retire", description=__doc__.split("\n\n")[0])
    parser.add_argument("colour", help="the colour to destroy")
    parser.add_argument("--force", action="store_true", help="destroy although the colour still has weight")
    parser.add_argument("--auto-approve", action="store_true", help="do not ask before destroying (cdktf's flag)")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)

    def check() -> None:
        config = load_config(args.config)
        if args.colour not in config.clusters:
            raise UnsafeTeardownError(f"{args.colour!r} is not a configured colour; use one of {', '.join(config.clusters)}")
        plan = teardown_plan(config, args.colour, config.clusters[args.colour])
        if not args.force:
            check_weight(plan, _live_weight(plan))

    refusal = exit_status(check, refused=(ConfigError, UnsafeTeardownError), failed=())
    if refusal:
        return refusal
    command = ["destroy", args.colour, *(["--auto-approve"] if args.auto_approve else [])]
    status = run_cdktf(command, cwd=args.config.resolve().parent, env={FORCE_ENV: "1" if args.force else "0"})
    if status == 0:
        print(f"{args.colour} is destroyed; remove clusters.{args.colour} from the config when you no longer need it")
    return status


def _live_weight(plan: TeardownPlan) -> int | None:
    import boto3

    route53 = boto3.client("route53", region_name=plan.region)
    try:
        zone = find_zone(route53, plan.zone_name)
    except LookupError as err:
        raise UnsafeTeardownError(str(err)) from None
    return colour_weight(route53, zone, plan.hostname, plan.colour)


if __name__ == "__main__":
    sys.exit(main())
