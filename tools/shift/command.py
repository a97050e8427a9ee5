"""`python -m tools.shift`: the command line of the shift (tools/shift/__init__.py says what it does)."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

import tools.shift
from model.config import (
    MAX_SHIFT_INTERVAL_SECONDS,
    MIN_SHIFT_INTERVAL_SECONDS,
    Config,
    ShiftConfig,
    applications,
    pin_advice,
)
from model.loading import ConfigError, check_weights, load_config
from model.paths import PROJECT_DIR
from model.revisions import RevisionKind, followed_revision
from tools.aws import Aws, credentials_expire_at
from tools.aws_problems import aws_problem
from tools.cli import exit_status
from tools.clock import Clock, SystemClock
from tools.live_routes import RoutesError, describe, off_weights, read_routes
from tools.live_weights import read_live
from tools.readiness import Readiness
from tools.readiness.insights import REFRESH_TIMEOUT_SECONDS, SKIP_FLAG
from tools.readiness.probe import Prober
from tools.shift import ShiftError, UnsafeShiftError
from tools.shift.drain import Drain
from tools.shift.events import ShiftEvents, Sink
from tools.shift.gate import describe_gate, limits
from tools.shift.judged import bake, describe_analysis
from tools.shift.metrics import METRICS_DELAY_SECONDS
from tools.shift.plan import plan_weights
from tools.shift.progress import Progress
from tools.shift.record import IdFileSink, RecordError, RecordSink, add_arguments, answer
from tools.shift.run import (
    IN_EFFECT_SECONDS,
    Shift,
    describe_splits,
    live,
    moving_applications,
    plan_shift,
    refuse_unroutable,
    step_summaries,
)
from tools.shift.status import status
from tools.traffic_lock import LEASE_SECONDS, LockedError, TrafficLock


def main(
    argv: Sequence[str] | None = None,
    *,
    aws: Aws | None = None,
    prober: Prober | None = None,
    clock: Clock | None = None,
    project: Path = PROJECT_DIR,
) -> int:
    """aws, prober, clock: the world to act on (tests); default: the real one. project: the Git repository the colours'
    revisions are of (default: this one)."""
    parser = argparse.ArgumentParser(prog="python -m tools.shift", description=(tools.shift.__doc__ or "").split("\n\n")[0])
    parser.add_argument("--to", help="the colour that ends with all the traffic")
    parser.add_argument(
        "--now",
        action="store_true",
        help="EMERGENCY: all traffic to --to in one change, without readiness or the metrics gate; needs no colour's "
        "cluster (refused only when --to lacks a target group or a healthy target: --force)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="with --now: move the traffic even to a colour without healthy targets, or to one that follows a branch",
    )
    parser.add_argument("--status", action="store_true", help="print the live weights, the rules, the config's and the lock")
    parser.add_argument(
        "--break-lock",
        action="store_true",
        help="remove the traffic lock (said), then go on: one its holder left behind, or a running shift's (with --now: "
        "that shift stops before its next write)",
    )
    parser.add_argument(
        "--application",
        action="append",
        default=[],
        metavar="NAME",
        help="move only this application (repeatable; default: every application); the others stay as they are",
    )
    parser.add_argument(
        "--independent",
        action="store_true",
        help="each application advances on its own judgement: a breaching one is rolled back alone while the others go "
        "on, and the end names each outcome (exit 1 when any was rolled back)",
    )
    parser.add_argument("--step", type=int, help="weight moved per step, 1-255 (default: traffic.shift.step)")
    parser.add_argument("--interval", type=int, help="seconds each step is watched (default: traffic.shift.interval_seconds)")
    parser.add_argument(
        "--allow-idle",
        action="store_true",
        help="let a window in which every application is idle pass (default: traffic.shift.allow_idle)",
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
        help="print the live weights, the plan, what each window is judged on and the target's readiness report, and "
        "change nothing",
    )
    add_arguments(parser)  # --history, --report: the record (tools/shift/record.py)
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)
    if not args.status and not args.to and not args.history and not args.report:
        parser.error("name the colour that gets the traffic (--to <colour>), or ask for --status, --history or --report <id>")
    if args.id_file and not args.to:
        parser.error("--id-file applies to a shift or a drain (--to <colour>): it names the run they record")
    if args.independent and args.now:
        parser.error("--independent applies to a gated shift; a drain (--now) moves its applications in one change")
    if args.force and not args.now:
        parser.error("--force applies only to a drain (--to <colour> --now --force); a gated shift is never forced")
    refused = (ConfigError, UnsafeShiftError, LockedError, RecordError)
    clock = clock or SystemClock()
    try:
        status = exit_status(lambda: _run(args, aws, prober, clock, project), refused=refused, failed=(ShiftError,))
    except KeyboardInterrupt as stop:
        # Stopped where nothing had moved yet (readiness, the lock) or at a drain's end: what is in place, read back.
        print(f"interrupted ({stop or 'SIGINT'}): {_in_place(args.config, aws, clock)}", file=sys.stderr)
        return 130
    if status == 1:  # failed part-way: the last line is what AWS holds now, not what the run believed
        print(f"now: {_in_place(args.config, aws, clock, moved=True)}", file=sys.stderr)
    return status


def _run(args: argparse.Namespace, aws: Aws | None, prober: Prober | None, clock: Clock, project: Path) -> None:
    config = load_config(args.config)
    clients = aws or Aws(config.region)
    if args.history or args.report:
        answer(args, config.project, clients, sys.stdout)
        return
    if args.to is not None and args.to not in config.clusters:
        raise UnsafeShiftError(f"--to: {args.to!r} is not a configured colour; use one of {', '.join(config.clusters)}")
    command = shlex.join(["python", "-m", "tools.shift", *sys.argv[1:]])
    lock = TrafficLock(clients.ssm, clients.sts, config.project, command, clock)
    if args.status:
        status(config, clients, lock, sys.stdout)
        return
    if args.now:
        moving = _refuse_a_moving_target(config, args.to, project, force=args.force)
        # No progress: a drain is one change, over in seconds, and says each application's move itself.
        events = _events(config, clients, args, command, clock)
        drain = Drain(
            config,
            clients,
            sys.stdout,
            lock,
            force=args.force,
            break_lock=args.break_lock,
            moving=moving,
            events=events,
            applications=args.application,
        )
        drain.run(args.to, dry_run=args.dry_run)
        return
    settings = config.traffic.shift.model_copy(
        update={
            "step": config.traffic.shift.step if args.step is None else args.step,
            "interval_seconds": config.traffic.shift.interval_seconds if args.interval is None else args.interval,
            "allow_idle": config.traffic.shift.allow_idle or args.allow_idle,
        }
    )
    if not MIN_SHIFT_INTERVAL_SECONDS <= settings.interval_seconds <= MAX_SHIFT_INTERVAL_SECONDS:
        raise UnsafeShiftError(
            f"--interval: {settings.interval_seconds} is not allowed; use {MIN_SHIFT_INTERVAL_SECONDS}-"
            f"{MAX_SHIFT_INTERVAL_SECONDS} seconds"
        )
    if args.to not in config.clusters:
        raise UnsafeShiftError(f"--to: {args.to!r} is not a configured colour; use one of {', '.join(config.clusters)}")
    plan_weights({args.to: 1}, args.to, settings.step)  # the step itself, before any AWS call
    named = moving_applications(config, args.application)
    routes, splits, _ = live(clients, config, joining=args.to)
    refuse_unroutable(config, routes, args.to, only=named)
    plans = plan_shift(splits, named, args.to, settings.step)
    if plans:  # the target gains weight
        _refuse_a_moving_target(config, args.to, project, force=False)
    _refuse_weights_the_config_refuses(args.config, step_summaries(splits, plans))
    steps = max((len(plan) for plan in plans.values()), default=0)
    if plans and not args.dry_run:
        baking = bake(config, settings, plans)
        _refuse_credentials_that_end_first(clock, settings, steps, skip_readiness=args.skip_readiness, bake_seconds=baking)
    if args.dry_run:
        current = {app: splits[app] for app in named}
        _print_plan(config, settings, args.to, current, plans, skip_readiness=args.skip_readiness, independent=args.independent)
    checks = Readiness(config, clients, clock, refresh_insights=not args.skip_insights_refresh, prober=prober, out=_say)
    # A test's clock is its world's (AWS's answers keep real time): windows by AWS's clock only with the system's.
    aws_time = isinstance(clock, SystemClock)
    progress = Progress.of(sys.stdout)
    events = _events(
        config, clients, args, command, clock, gate_limits=limits(settings), out=progress.above(sys.stderr), sinks=[progress]
    )
    out = progress.above(sys.stdout)  # in a terminal, the run's lines scroll above its live block
    shift = Shift(
        config,
        settings,
        clients,
        clock,
        out,
        checks,
        lock,
        args.skip_readiness,
        args.break_lock,
        aws_time,
        events=events,
        applications=args.application,
        independent=args.independent,
        progress=progress,
    )
    shift.run(args.to, dry_run=args.dry_run)


def _events(
    config: Config,
    clients: Aws,
    args: argparse.Namespace,
    command: str,
    clock: Clock,
    gate_limits: Mapping[str, float] | None = None,
    out: TextIO | None = None,  # default: stderr, beside the run's other warnings (stdout stays the run's account)
    sinks: Sequence[Sink] = (),
) -> ShiftEvents:
    """The run's events (tools/shift/events.py) to the topic, the record (tools/shift/record.py) and the other sinks
    (the gated shift's progress.py: the operator's screen); a dry run calls neither the topic nor the record."""
    return ShiftEvents(
        None if args.dry_run else clients,
        project=config.project,
        target=args.to,
        command=command,
        clock=clock,
        out=out or sys.stderr,
        sinks=[] if args.dry_run else [RecordSink(clients, config.project, sys.stderr), *_id_file(args), *sinks],
        limits=gate_limits,
    )


def _id_file(args: argparse.Namespace) -> list[Sink]:
    """--id-file's sink (tools/shift/record.py IdFileSink), when asked for."""
    return [IdFileSink(args.id_file, sys.stderr)] if args.id_file else []


def _say(line: str) -> None:
    print(line, flush=True)


def _refuse_a_moving_target(config: Config, target: str, project: Path, *, force: bool) -> str:
    """Weight goes only to a colour that follows a tag or a commit: on a branch, one push would reach it while it
    serves, together with every other colour on that branch. Judged before the lock and any write. A drain (--now) must
    always be able to empty a broken colour, so with --force the traffic moves anyway: returned is what the drain then
    says (empty: nothing to say). Weight taken from a colour on a branch is never refused: only the target is judged."""
    followed = followed_revision(config, target, project=project)
    if followed.kind.immutable:
        return ""
    if followed.kind is RevisionKind.BRANCH:
        what = f"{target} follows the branch {followed.revision!r} ({followed.key})"
    else:
        what = (
            f"{target} follows {followed.revision!r} ({followed.key}), which this clone knows as no branch, tag or commit "
            "(a tag not fetched: `git fetch --tags origin`), so the shift cannot tell that it never moves"
        )
    said = f"{what}: with weight, one push to it reaches {target} while it serves, and every colour on it, together"
    if force:
        return said
    raise UnsafeShiftError(
        f"{said}. {pin_advice(target)}, deploy {target} (`cdktf deploy {target}`: Argo CD then follows the tag) and shift "
        f"again. Nothing was changed; in an emergency, `python -m tools.shift --to {target} --now --force` moves the "
        "traffic to it anyway"
    )


def planned_seconds(settings: ShiftConfig, steps: int, *, skip_readiness: bool, bake_seconds: int = 0) -> int:
    """How long a shift of this many steps may take, at most, before its lock is released: readiness (its insights
    refresh waits up to REFRESH_TIMEOUT_SECONDS), then per step the writes read back (IN_EFFECT_SECONDS at most), up to
    a minute to align the window with CloudWatch's, the window in whole minutes, the metrics' delay; the bake window
    (bake_seconds, aligned and judged the same way, nothing written); and a roll-back."""
    window = 60 * math.ceil(settings.interval_seconds / 60)
    step = IN_EFFECT_SECONDS + 60 + window + METRICS_DELAY_SECONDS
    baking = 60 + 60 * math.ceil(bake_seconds / 60) + METRICS_DELAY_SECONDS if bake_seconds else 0
    return (0 if skip_readiness else REFRESH_TIMEOUT_SECONDS) + steps * step + baking + IN_EFFECT_SECONDS


def _refuse_credentials_that_end_first(
    clock: Clock, settings: ShiftConfig, steps: int, *, skip_readiness: bool, bake_seconds: int
) -> None:
    """A shift whose credentials end before it can would stop part-way: its step, its roll-back and the lock's release
    all fail with ExpiredToken, leaving an unjudged split and a lock. Refused up front when the environment says when
    they end (AWS_CREDENTIAL_EXPIRATION, set by the workflows); a profile or an SSO login refreshes itself."""
    ends = credentials_expire_at()
    if ends is None:
        return
    needed = planned_seconds(settings, steps, skip_readiness=skip_readiness, bake_seconds=bake_seconds)
    left = (ends - clock.now()).total_seconds()
    if left < needed:
        raise UnsafeShiftError(
            f"the AWS credentials expire at {ends:%Y-%m-%d %H:%M} UTC, in {max(0, int(left // 60))} min, before this "
            f"shift of {steps} step(s) could finish (up to {math.ceil(needed / 60)} min with readiness and a roll-back): "
            "nothing was changed. Get a longer session (the workflow's role-duration-seconds, within the role's "
            "MaxSessionDuration: docs/ci.md), or move more weight per step (--step)"
        )


def _in_place(path: Path, aws: Aws | None, clock: Clock, *, moved: bool = False) -> str:
    """What traffic is in place now, read back from AWS, and who holds the traffic lock, in one line. moved: the run
    may have changed the weights before it failed (said when AWS cannot be read)."""
    try:
        config = load_config(path)
        clients = aws or Aws(config.region)
        found = read_live(clients.ssm, config.project)
        routes = read_routes(clients.elbv2, config.project)
        splits = {app: found.of(app) for app in routes.public}
        wrong = off_weights(routes, splits)
        lock = TrafficLock(clients.ssm, clients.sts, config.project, "", clock)
        holder = lock.holder()
    except (ConfigError, RoutesError) as err:
        return f"what traffic is in place could not be read ({err}); check with --status"
    except Exception as err:
        said = aws_problem(err)
        if said is None:
            raise
        if moved:
            return (
                f"what traffic is in place could not be read ({said}): the last split this run wrote stands unjudged, "
                f"and its traffic lock goes stale by itself within {LEASE_SECONDS // 60} min; check with --status once "
                "AWS answers, and drain with --now if needed"
            )
        return f"what traffic is in place could not be read ({said}); check with --status"
    if holder is None:
        held = "the traffic lock is free"
    elif (stale := lock.stale_since(holder)) is not None:
        held = f"the traffic lock of {holder.describe()} is stale since {stale:%H:%M:%S} UTC"
    else:
        held = f"the traffic lock is held by {holder.describe()} (stale by itself at {holder.lease_until or '?'})"
    if wrong:
        forwards = "; ".join(wrong)
        return (
            f"the weights parameter says {describe_splits(splits)}, but the load balancer forwards {forwards}: settle it "
            f"with --now; {held}"
        )
    return f"traffic in place: {describe_splits(splits)} (the weights parameter and every rule agree); {held}"


def _refuse_weights_the_config_refuses(path: Path, plan: Sequence[Mapping[str, int]]) -> None:
    """A colour that gains weight must name its whole release in its entry (model/config/): the config, with each
    step's colours' weights (the most any application gives each) as its declared ones, must stand, or the shift
    refuses before its first step."""
    for state in plan:
        try:
            check_weights(path, state)
        except ConfigError as err:
            raise UnsafeShiftError(
                f"the config would refuse the weights {describe(state)} of this shift; nothing was changed:\n"
                + "\n".join(f"  - {problem}" for problem in err.problems)
            ) from None


def _print_plan(
    config: Config,
    settings: ShiftConfig,
    target: str,
    current: Mapping[str, Mapping[str, int]],
    plans: Mapping[str, Sequence[Mapping[str, int]]],
    *,
    skip_readiness: bool,
    independent: bool,
) -> None:
    print(f"now      {describe_splits(current)} (live)")
    steps = max((len(plan) for plan in plans.values()), default=0)
    for number in range(1, steps + 1):
        print(f"step {number}/{steps} {describe_splits({app: plan[min(number, len(plan)) - 1] for app, plan in plans.items()})}")
    if not plans:
        print(f"{target} already has all the traffic: nothing to do")
        return
    if held := [app for app in current if app not in plans]:
        print(f"{', '.join(held)}: {target} holds all of it already (nothing moves)")
    if others := [app.name for app in applications(config) if app.name not in current]:
        print(f"not moved (not named with --application): {', '.join(others)}")
    together = (
        "each on its own judgement, a breaching one rolled back alone (--independent)"
        if independent
        else ("together, a breach by any one rolling back every one")
    )
    print(
        f"each step: the weights parameter, then each moving application's rule of the shared load balancer, in effect "
        f"once they read back; {target}'s target groups watched for {settings.interval_seconds} s; {together}"
    )
    print(f"gate: {describe_gate(settings)}")
    for line in describe_analysis(config, settings, target, plans):  # said, not asked: a dry run calls no provider
        print(line)
    if skip_readiness:
        print(f"readiness: NOT CHECKED (--skip-readiness): weight may move to {target} before it has proven itself")
    else:
        apps = len(config.applications)
        print(
            f"readiness: checked before the first step ({target}: EKS ACTIVE at its version, fresh insights with none "
            f"in ERROR, its release Synced and Healthy in Argo CD, and for each of its {apps} application(s) healthy "
            "targets and its preview host end to end)"
        )
