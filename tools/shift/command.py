"""`python -m tools.shift`: the command line of the shift (tools/shift/__init__.py says what it does)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import tools.shift
from model.config import MIN_SHIFT_INTERVAL_SECONDS, Config, ShiftConfig
from model.loading import ConfigError, check_weights, load_config
from tools.aws import Aws
from tools.cli import exit_status
from tools.clock import SystemClock
from tools.readiness import Readiness
from tools.readiness.insights import SKIP_FLAG
from tools.readiness.probe import Prober
from tools.shift import ShiftError, UnsafeShiftError
from tools.shift.deploy import CdktfDeployer, Deployer
from tools.shift.gate import describe_gate
from tools.shift.plan import describe, plan_weights
from tools.shift.run import Shift


def main(
    argv: Sequence[str] | None = None, *, aws: Aws | None = None, deployer: Deployer | None = None, prober: Prober | None = None
) -> int:
    """aws, deployer, prober: the world to act on (tests); default: the real one."""
    parser = argparse.ArgumentParser(prog="python -m tools.shift", description=(tools.shift.__doc__ or "").split("\n\n")[0])
    parser.add_argument("--to", required=True, help="the colour that ends with all the traffic")
    parser.add_argument("--step", type=int, help="weight moved per step, 1-255 (default: traffic.shift.step)")
    parser.add_argument("--interval", type=int, help="seconds each step is watched (default: traffic.shift.interval_seconds)")
    parser.add_argument(
        "--allow-idle",
        action="store_true",
        help="let a window with fewer than traffic.shift.min_requests requests pass (default: traffic.shift.allow_idle)",
    )
    parser.add_argument(
        "--skip-readiness",
        action="store_true",
        help="move weight without checking that the target is ready (EKS insights, Argo CD sync and health, targets)",
    )
    parser.add_argument(
        SKIP_FLAG,
        action="store_true",
        help="read the target's EKS upgrade insights as EKS last computed them (about daily) instead of asking for a refresh",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan of weights, the target's readiness report and the changes pending, and change nothing",
    )
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)
    return exit_status(lambda: _run(args, aws, deployer, prober), refused=(ConfigError, UnsafeShiftError), failed=(ShiftError,))


def _run(args: argparse.Namespace, aws: Aws | None, deployer: Deployer | None, prober: Prober | None) -> None:
    config = load_config(args.config)
    settings = config.traffic.shift.model_copy(
        update={
            "step": config.traffic.shift.step if args.step is None else args.step,
            "interval_seconds": config.traffic.shift.interval_seconds if args.interval is None else args.interval,
            "allow_idle": config.traffic.shift.allow_idle or args.allow_idle,
        }
    )
    if settings.interval_seconds < MIN_SHIFT_INTERVAL_SECONDS:
        raise UnsafeShiftError(
            f"--interval: {settings.interval_seconds} is not allowed; use at least {MIN_SHIFT_INTERVAL_SECONDS} s"
        )
    plan = plan_weights(config.weights, args.to, settings.step)
    _refuse_weights_the_config_refuses(args.config, plan)
    deployer = deployer or CdktfDeployer(args.config.resolve().parent)
    if args.dry_run:
        _print_plan(config, settings, args.to, skip_readiness=args.skip_readiness)
        if not plan:
            return
    clients = aws or Aws(config.region)
    clock = SystemClock()
    checks = Readiness(config, clients, clock, refresh_insights=not args.skip_insights_refresh, prober=prober, out=_say)
    shift = Shift(args.config, config, settings, clients, deployer, clock, sys.stdout, checks, args.skip_readiness)
    shift.run(args.to, dry_run=args.dry_run)


def _say(line: str) -> None:
    print(line, flush=True)


def _refuse_weights_the_config_refuses(path: Path, plan: Sequence[Mapping[str, int]]) -> None:
    """Every step writes its weights into the config: a config that refuses one of them (a colour gaining weight
    while it inherits part of its release, model/rules.py) stops the shift before its first step, not in the middle."""
    for state in plan:
        try:
            check_weights(path, state)
        except ConfigError as err:
            raise UnsafeShiftError(
                f"the config would refuse the weights {describe(state)} of this shift; nothing was changed:\n"
                + "\n".join(f"  - {problem}" for problem in err.problems)
            ) from None


def _print_plan(config: Config, settings: ShiftConfig, target: str, *, skip_readiness: bool) -> None:
    weights = config.weights
    plan = plan_weights(weights, target, settings.step)
    print(f"now      {describe(weights)}")
    for number, state in enumerate(plan, 1):
        print(f"step {number}/{len(plan)} {describe(state)}")
    if plan:
        print(
            "each step: plan each colour, apply it if it changes nothing but weights (else refuse, weights restored), "
            f"wait for Route53 and the TTL, watch {target}'s ALB for {settings.interval_seconds} s"
        )
        print(f"gate: {describe_gate(settings)}")
        if skip_readiness:
            print(f"readiness: NOT CHECKED (--skip-readiness): weight may move to {target} before it has proven itself")
        else:
            print(
                f"readiness: checked before the first step ({target}: EKS ACTIVE at its version, fresh insights with none "
                "in ERROR, its release Synced and Healthy in Argo CD, healthy targets, its preview host end to end)"
            )
    else:
        print(f"{target} already has all the traffic: nothing to do")
