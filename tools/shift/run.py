"""The gated shift: under the traffic lock, the moving applications (every one, or those named with --application)
from their live weights to the target in steps, each step one change (the weights parameter first, then each moving
application's weighted rule), in effect once the rules read back; watched for the window, the target's target groups'
health polled meanwhile; every application judged on its own. A breach by any one rolls every moving application back
in one change; with `independent`, the breaching one goes back alone and the others go on, and the end names each
outcome. No Terraform, no colour's Kubernetes API: only the load balancer, the parameter and CloudWatch (readiness,
before the first step, is the target's to pass)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NoReturn, TextIO

from model.config import Config, ShiftConfig, applications
from tools.analysis.http import Opener, urllib_opener
from tools.analysis.verdict import Verdict, Window
from tools.analysis.window import Sources, judge_window
from tools.aws import Aws
from tools.aws_problems import aws_errors_as
from tools.clock import MAX_CLOCK_SKEW_SECONDS, POLL_SECONDS, Clock, aws_date
from tools.live_routes import (
    LiveRoutes,
    RoutesError,
    Weights,
    describe,
    off_weights,
    read_routes,
    stickiness_config,
    write_rules,
)
from tools.live_weights import PER_COLOUR_SAID, SCHEMA, LiveWeights, read_live, summary, write_live
from tools.readiness import Readiness, missing
from tools.shift import PartlyDoneError, ShiftError, ShiftLockLostError, UnsafeShiftError
from tools.shift.events import Kind, ShiftEvents, verdict_values
from tools.shift.gate import describe_gate, is_idle, judge
from tools.shift.judged import bake, breached, describe_analysis, subjects
from tools.shift.metrics import METRICS_DELAY_SECONDS, WindowMetrics, describe_metrics, gate_values, read_window_metrics
from tools.shift.plan import plan_weights
from tools.shift.progress import Progress, short_step
from tools.signals import deferred
from tools.traffic_lock import TrafficLock

# How long the load balancer may take to show a rule change on reading it back (it applies in seconds).
IN_EFFECT_SECONDS = 120

Splits = dict[str, Weights]  # application -> colour -> weight


@dataclass
class Moving:
    """One application the shift moves: its plan, and where a stop puts it back."""

    plan: list[Weights]
    passed: Weights  # the last split whose window passed (the live one at first): what a breach or a stop goes back to
    written: Weights  # the split its rule forwards now
    before: Weights = field(default_factory=dict)  # the passed split before `passed`: a bake window's breach goes here
    outcome: str = ""  # why it stopped advancing (independent: rolled back alone); empty while it advances


@dataclass
class Shift:
    config: Config
    settings: ShiftConfig
    aws: Aws
    clock: Clock
    out: TextIO
    readiness: Readiness  # the target's proof (tools/readiness/)
    lock: TrafficLock
    skip_readiness: bool = False  # --skip-readiness: move weight without the target's proof (said loudly)
    break_lock: bool = False
    # Windows by AWS's clock (the Date of AWS's answers), a local clock more than MAX_CLOCK_SKEW_SECONDS off refused.
    # Off where the clock is a test's own (its world's time is the test's).
    aws_time: bool = False
    opener: Opener = urllib_opener  # how the analysis's HTTP providers reach a host (a test's own in tests)
    events: ShiftEvents = field(default_factory=ShiftEvents.silent)  # told each start, step, verdict, roll-back, end
    applications: Sequence[str] = ()  # --application: only these move (empty: every configured application)
    independent: bool = False  # --independent: each application advances on its own judgement, rolled back alone
    progress: Progress | None = None  # told each poll of a window (the time left, healthy targets); default: no one
    _offset: timedelta = timedelta(0)  # AWS's clock minus the local one, as the last answer gave it
    _live: LiveWeights = field(default_factory=LiveWeights)  # the parameter as this run last wrote (or read) it

    def run(self, target: str, *, dry_run: bool = False) -> None:
        """dry_run: everything before the first step (the live weights, the plan, readiness), reported; nothing moves."""
        if dry_run:
            self._prepare(target)
            return
        waiting, checks = self.clock, self.readiness
        writers = {"elbv2": self.aws.elbv2, "ssm": self.aws.ssm}
        with self.lock.held(break_lock=self.break_lock, say=self._say), self.lock.fenced(writers, error=ShiftLockLostError):
            # Its lease renewed while it waits: on the gate's windows and on readiness's waits (an insights refresh, the
            # preview probe), which can outlast the lease as well.
            self.clock = self.lock.renewing(waiting)
            self.readiness = replace(checks, clock=self.clock)
            try:
                plans, routes, splits = self._prepare(target)
                if plans:
                    details = {"plan": plans, "interval_seconds": self.settings.interval_seconds}
                    if self.independent:
                        details["independent"] = True
                    with self.events.running({app: splits[app] for app in plans}, **details) as end:
                        end.update(outcomes=self._shift(target, plans, routes, splits))
            finally:
                self.clock, self.readiness = waiting, checks

    def _prepare(self, target: str) -> tuple[dict[str, list[Weights]], LiveRoutes, Splits]:
        """The moving applications' plans (those that still have weight to move), the load balancer, and every
        application's live split."""
        if self.aws_time:
            self._set_offset(self.aws.sts.get_caller_identity(), refuse=UnsafeShiftError)
        routes, splits, found = live(self.aws, self.config, joining=target)
        moving = moving_applications(self.config, self.applications)
        refuse_unroutable(self.config, routes, target, only=moving)
        plans = plan_shift(splits, moving, target, self.settings.step)
        if not plans:
            self._say(f"{target} already has all the traffic ({describe_splits(splits_of(splits, moving))}): nothing to do")
            return plans, routes, splits
        self._say(f"live weights: {describe_splits(splits_of(splits, moving))}; plan: {describe_plans(plans)}")
        if found.schema != SCHEMA:
            self._say(f"the weights parameter holds {PER_COLOUR_SAID}: this shift's first write, under the traffic lock")
        if unready := self._readiness(target):
            raise unready
        # Every application with a rule, in the value this run writes: the moving ones change, the others stay.
        self._live = found.updated(splits, keep=routes.public)
        return plans, routes, splits

    def _shift(self, target: str, plans: Mapping[str, list[Weights]], routes: LiveRoutes, splits: Splits) -> dict[str, str]:
        """The steps and the bake window; returns each moving application's outcome ("done"), or raises: ShiftError
        (rolled back), PartlyDoneError (independent: some went back alone)."""
        moving = {app: Moving(list(plan), passed=splits[app], written=splits[app]) for app, plan in plans.items()}
        steps = max(len(m.plan) for m in moving.values())
        unproven = " | READINESS NOT CHECKED (--skip-readiness)" if self.skip_readiness else ""
        which = f" of {', '.join(moving)}" if self.applications else ""
        how = ", each application on its own judgement (--independent)" if self.independent else ""
        final = {app: m.plan[-1] for app, m in moving.items()}
        self._say(
            f"shifting to {target}: {describe_splits(splits_of(splits, moving))} -> {describe_splits(final)}{which} in "
            f"{steps} step(s){how}; each step is watched for {self.settings.interval_seconds} s "
            f"({describe_gate(self.settings)}){unproven}"
        )
        for line in describe_analysis(self.config, self.settings, target, moving):
            self._say(line)
        try:
            for number in range(1, steps + 1):
                states = {app: m.plan[min(number, len(m.plan)) - 1] for app, m in self._advancing(moving).items()}
                if not states:
                    break
                label = f"step {number}/{steps}  {describe_splits(states)}"
                self._step(label, states, moving, routes, target, steps - number)
                for app, state in states.items():
                    m = moving[app]
                    if not m.outcome and state != m.passed:  # one that reached its final split earlier stays there
                        m.before, m.passed = m.passed, state
            at_end = self._advancing(moving)
            if at_end and (seconds := bake(self.config, self.settings, at_end)):
                # The final split's bake window is unjudged until it passes: a breach or a stop in it goes back a step.
                final = {app: m.passed for app, m in at_end.items()}
                for m in at_end.values():
                    m.passed = m.before
                self._say(f"baking {describe_splits(final)} for {seconds} s before done (the traffic lock held)")
                self._window(f"bake  {describe_splits(final)}", final, seconds, moving, routes, target, self.clock.now(), 0)
                for app, state in final.items():
                    if not moving[app].outcome:
                        moving[app].passed = state
        except KeyboardInterrupt as stop:
            self._roll_back(self._advancing(moving), routes, f"interrupted ({stop or 'SIGINT'})")
        outcomes = {app: m.outcome or "done" for app, m in moving.items()}
        done = {app: m.passed for app, m in moving.items() if not m.outcome}
        if len(done) < len(moving):
            said = [f"{app}: {m.outcome}" for app, m in moving.items() if m.outcome]
            if done:
                said.insert(0, f"done: {describe_splits(done)}")
            raise PartlyDoneError("; ".join(said), outcomes)
        self._say(f"done: {describe_splits(done)}")
        return outcomes

    def _step(self, label: str, states: Splits, moving: dict[str, Moving], routes: LiveRoutes, target: str, left: int) -> None:
        started = self.clock.now()
        changed = {app: state for app, state in states.items() if state != moving[app].written}
        try:
            calls = self._apply(changed, routes)
        except ShiftLockLostError:
            raise
        except ShiftError as err:
            self._roll_back(self._advancing(moving), routes, f"{label}: {err}")
        for app, state in changed.items():
            moving[app].written = state
        self._say(f"{label}  | in effect ({calls} rule change(s)); watching {target}")
        self.events.emit(Kind.STEP, states, step=label, rule_changes=calls)
        self._window(label, states, self.settings.interval_seconds, moving, routes, target, started, left)

    def _window(
        self,
        label: str,
        states: Splits,
        seconds: int,
        moving: dict[str, Moving],
        routes: LiveRoutes,
        target: str,
        started: datetime,
        left: int,
    ) -> None:
        """The splits in place (states) watched for seconds, then judged (the gate, each application's analysis): a
        breach sends back to its `passed` split every moving application, or (independent) the breaching one alone.
        left: the steps after this one, for the estimate of the time left."""
        window = 60 * math.ceil(seconds / 60)  # whole minutes, as CloudWatch keeps ALB metrics
        # The window: whole minutes of AWS's clock (CloudWatch's), from the next one on.
        now = self.clock.now() + self._offset
        wait = (60 - now.second - now.microsecond / 1e6) % 60
        self.clock.sleep(wait)
        window_start = (now + timedelta(seconds=wait)).replace(microsecond=0)
        end = self.clock.now() + timedelta(seconds=window)
        watched = dict(states)
        while watched:
            try:
                unhealthy = self._watch(routes, target, end, watched, label)
            except ShiftError as err:  # AWS stopped answering meanwhile (expired credentials, say): the split is unjudged
                self._roll_back(self._advancing(moving), routes, f"{label}: cannot watch {target}'s target groups: {err}")
            if not unhealthy:
                break
            empty = sorted(unhealthy)
            why = f"no healthy target in {target}'s target group of {', '.join(empty)}: rolled back without waiting"
            self._breach(label, dict.fromkeys(empty, why), moving, routes, reason=f"{label}: {why}")
            watched = {app: state for app, state in watched.items() if app not in unhealthy}
        if not watched:
            return
        self.clock.sleep(METRICS_DELAY_SECONDS)
        try:
            with aws_errors_as(ShiftError):
                windows = self._metrics(routes, target, window_start, window, watched)
        except ShiftError as err:
            self._roll_back(self._advancing(moving), routes, f"{label}: cannot read the window's metrics: {err}")
        minimums = self._minimums()
        breaches = judge(windows, minimums, self.settings)
        for app, metrics in windows.items():
            verdict = "GATE TRIPPED" if app in breaches else "IDLE" if is_idle(metrics, minimums[app]) else "ok"
            self._say(f"    {app}: {describe_metrics(metrics)} | {verdict}")
        verdicts = self._analyse(target, Window(window_start, window_start + timedelta(seconds=window)), watched)
        for app, why in breached(verdicts).items():
            breaches[app] = f"{breaches[app]}; {why}" if app in breaches else why
        self.events.emit(
            Kind.VERDICT,
            watched,
            step=label,
            passed=not breaches,
            breaches=breaches,
            metrics={a: describe_metrics(m) for a, m in windows.items()},
            gate={a: gate_values(m) for a, m in windows.items()},
            analysis={a: [verdict_values(v) for v in mine] for a, mine in verdicts.items() if mine},
        )
        remaining = (self.clock.now() - started) * left
        self._say(f"{label}  | {'GATE TRIPPED' if breaches else 'ok'} | ~{math.ceil(remaining.total_seconds() / 60)}m left")
        if breaches:
            self._breach(label, breaches, moving, routes)

    def _breach(
        self, label: str, breaches: Mapping[str, str], moving: dict[str, Moving], routes: LiveRoutes, *, reason: str = ""
    ) -> None:
        """These applications breached (why, by application): every moving one goes back (raises), or, independent,
        these alone (said, and they advance no more). reason: the whole breach in a line (default: each one's why)."""
        reason = reason or f"{label}: " + "; ".join(f"{app}: {why}" for app, why in breaches.items())
        if not self.independent:
            self._roll_back(self._advancing(moving), routes, reason)
        back = {app: moving[app] for app in breaches}
        splits = {app: m.passed for app, m in back.items()}
        self._say(f"rolling back {', '.join(back)} alone to {describe_splits(splits)}: {reason}")
        self.events.emit(Kind.ROLLBACK, splits, reason=reason, alone=True)
        self._write_back(splits, routes, reason)
        for app, m in back.items():
            m.written = m.passed
            m.outcome = f"rolled back to {describe(m.passed)} at {short_step(label)} ({breaches[app]})"

    def _advancing(self, moving: Mapping[str, Moving]) -> dict[str, Moving]:
        return {app: m for app, m in moving.items() if not m.outcome}

    def _analyse(self, target: str, window: Window, only: Collection[str]) -> dict[str, list[Verdict]]:
        """Each of these applications' analysis of the window, each verdict said on a line of its own, and returned by
        application. One call for all applications (CloudWatch asked once per kind)."""
        found = subjects(self.config, self.settings, target, only)
        if not found:
            return {}
        sources = Sources(cloudwatch=self.aws.cloudwatch, credentials=self.aws.credentials, opener=self.opener, clock=self.clock)
        verdicts = judge_window(found, window, sources)
        for app, mine in verdicts.items():
            for verdict in mine:
                self._say(f"    {app}: {verdict.line()}")
        return verdicts

    def _apply(self, states: Splits, routes: LiveRoutes) -> int:
        """The parameter (the intent: every application's split, these changed) first, then these applications'
        rules; returns once they read back at their states. AWS errors fail the step (it is rolled back, or the
        roll-back says it could not be). Nothing is written once the lock is no longer this run's."""
        if not states:
            return 0
        with aws_errors_as(ShiftError):
            self._still_locked(states)
            live = self._live.updated(states, keep=routes.public)
            write_live(self.aws.ssm, self.config.project, live)
            self._live = live
            answers: list[Any] = []
            calls = write_rules(
                self.aws.elbv2, routes, states, colours=self.config.clusters, stickiness=self._stickiness, answers=answers
            )
            if self.aws_time and answers:
                self._set_offset(answers[-1], refuse=ShiftError)
            self._wait_in_effect(states)
        return calls

    def _set_offset(self, answer: Any, *, refuse: type[Exception]) -> None:
        """AWS's clock from an answer's Date: the offset the windows are taken with; refused when the local clock is
        more than MAX_CLOCK_SKEW_SECONDS off it (no Date: the local clock stands)."""
        aws_now = aws_date(answer)
        if aws_now is None:
            return
        local = self.clock.now()
        offset = aws_now - local
        if abs(offset.total_seconds()) > MAX_CLOCK_SKEW_SECONDS:
            way = "behind" if offset.total_seconds() > 0 else "ahead of"
            raise refuse(
                f"this machine's clock ({local:%H:%M:%S} UTC) is {abs(offset.total_seconds()):.0f} s {way} AWS's "
                f"({aws_now:%H:%M:%S} UTC): the gate would judge the wrong minutes of CloudWatch; set the clock right "
                f"(NTP) and run again (at most {MAX_CLOCK_SKEW_SECONDS} s off)"
            )
        self._offset = offset

    @property
    def _stickiness(self) -> dict[str, object]:
        """The configuration's stickiness: every write of the rules carries it (the action is the shift's)."""
        return stickiness_config(self.config.traffic.stickiness_seconds)

    def _still_locked(self, states: Splits) -> None:
        """The lock is still this run's, or ShiftLockLostError: a drain broke it to move the traffic itself. (Each write is
        fenced again as it is sent: TrafficLock.fenced.)"""
        try:
            self.lock.fence(ShiftLockLostError)
        except ShiftLockLostError as err:
            raise ShiftLockLostError(f"{err}: this shift stopped before writing {describe_splits(states)}") from None

    def _wait_in_effect(self, states: Splits) -> None:
        deadline = self.clock.now() + timedelta(seconds=IN_EFFECT_SECONDS)
        while True:
            wrong = off_weights(read_routes(self.aws.elbv2, self.config.project), states)
            if not wrong:
                return
            if self.clock.now() >= deadline:
                raise ShiftError(f"after {IN_EFFECT_SECONDS} s the load balancer still forwards {'; '.join(wrong)}")
            self.clock.sleep(POLL_SECONDS)

    def _watch(self, routes: LiveRoutes, target: str, end: datetime, watched: Collection[str], label: str) -> set[str]:
        """The window passing until `end`, the watched applications' target groups of the target polled: the ones
        without a healthy target end it at once (the load balancer would keep sending their share to failing pods until
        the window closed); returned (empty: the window passed). Each poll is the progress's too (label: the step's),
        and the window's close, after which it is judged."""
        groups = {app: arn for app, arn in routes.of_colour(target).items() if app in watched}
        health: dict[str, tuple[int, int]] = {}
        while (now := self.clock.now()) < end:
            with aws_errors_as(ShiftError):
                health = target_health(self.aws.elbv2, groups)
            if self.progress is not None:
                self.progress.watching(label=label, until=end, now=now, health=health)
            if empty := without_healthy(health):
                return set(empty)
            self.clock.sleep(min(POLL_SECONDS, max(0.0, (end - self.clock.now()).total_seconds())))
        if self.progress is not None:
            self.progress.watching(label=label, until=end, now=self.clock.now(), health=health)
        return set()

    def _metrics(
        self, routes: LiveRoutes, target: str, start: object, window: int, only: Collection[str] | None = None
    ) -> dict[str, WindowMetrics]:
        """The window of each application (only: of these) in the target colour."""
        groups = routes.of_colour(target)
        mine = {app.name: groups[app.name] for app in applications(self.config) if only is None or app.name in only}
        # One GetMetricData call for every application (tools/shift/metrics.py), not one each.
        return read_window_metrics(self.aws.cloudwatch, routes.load_balancer_arn, mine, start, window)  # type: ignore[arg-type]

    def _minimums(self) -> dict[str, int]:
        return {
            app.name: self.settings.min_requests if app.config.min_requests is None else app.config.min_requests
            for app in applications(self.config)
        }

    def _roll_back(self, moving: Mapping[str, Moving], routes: LiveRoutes, reason: str) -> NoReturn:
        """Every one of these applications back at its `passed` split in one change, then ShiftError."""
        splits = {app: m.passed for app, m in moving.items()}
        self._say(f"rolling back to {describe_splits(splits)}: {reason}")
        self.events.emit(Kind.ROLLBACK, splits, reason=reason)
        self._write_back(splits, routes, reason)
        raise ShiftError(f"{reason}; rolled back to {describe_splits(splits)}")

    def _write_back(self, splits: Splits, routes: LiveRoutes, reason: str) -> None:
        try:
            with deferred():  # a second stop (a cancelled run's SIGTERM after its SIGINT) waits for the roll-back
                self._apply(splits, routes)
        except ShiftLockLostError as err:
            raise ShiftLockLostError(f"{reason}; not rolled back: {err}") from None
        except ShiftError as err:
            raise ShiftError(
                f"{reason}; the roll-back to {describe_splits(splits)} failed too: {err}. Move the traffic with "
                f"`python -m tools.shift --to <colour> --now`, and check it with --status"
            ) from None

    def _readiness(self, target: str) -> UnsafeShiftError | None:
        if self.skip_readiness:
            self._say(
                f"WARNING: --skip-readiness: {target} has NOT been checked (EKS version and insights, its release in Argo "
                "CD, healthy targets, every application's preview host end to end); weight may move to a colour that "
                "cannot serve it"
            )
            return None
        self._say(f"readiness of {target}:")
        if gaps := missing(self.readiness.check(target)):
            return UnsafeShiftError(
                f"{target} has not proven itself ready for traffic: {'; '.join(gaps)}. Nothing was changed; fix what is "
                "missing or wait, then run the shift again (--skip-readiness moves weight without this proof)"
            )
        return None

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def moving_applications(config: Config, named: Sequence[str]) -> list[str]:
    """The applications a shift moves: the named ones (--application, each a configured application), or all."""
    configured = [app.name for app in applications(config)]
    if not configured:
        raise UnsafeShiftError("no applications are configured: there is no traffic to move")
    if unknown := [name for name in named if name not in configured]:
        raise UnsafeShiftError(
            f"--application: {', '.join(repr(n) for n in unknown)} is not a configured application; use one of "
            f"{', '.join(configured)} (applications.<name> in the project file)"
        )
    return [app for app in configured if not named or app in named]


def plan_shift(
    splits: Mapping[str, Mapping[str, int]], moving: Sequence[str], target: str, step: int
) -> dict[str, list[Weights]]:
    """Each moving application's plan from its own split (tools/shift/plan.py); left out: the ones the target already
    holds whole."""
    plans = {app: plan_weights(splits[app], target, step) for app in moving}
    return {app: plan for app, plan in plans.items() if plan}


def step_summaries(splits: Mapping[str, Mapping[str, int]], plans: Mapping[str, list[Weights]]) -> list[Weights]:
    """The colours' weights (the most any application gives each: what the guards read) after each step."""
    steps = max((len(plan) for plan in plans.values()), default=0)
    found = []
    for number in range(1, steps + 1):
        at = {app: plans[app][min(number, len(plans[app])) - 1] if app in plans else split for app, split in splits.items()}
        found.append(summary(at.values(), {}))
    return found


def describe_splits(splits: Mapping[str, Mapping[str, int]]) -> str:
    """Applications' splits in a line: one split once when they all have it, else each application's."""
    values = list(splits.values())
    if values and all(value == values[0] for value in values):
        return describe(values[0])
    return "; ".join(f"{app} {describe(split)}" for app, split in splits.items())


def splits_of(splits: Mapping[str, Weights], applications: Collection[str]) -> Splits:
    return {app: splits[app] for app in applications}


def describe_plans(plans: Mapping[str, Sequence[Mapping[str, int]]]) -> str:
    said = {app: " -> ".join(describe(state) for state in plan) for app, plan in plans.items()}
    values = list(said.values())
    if all(value == values[0] for value in values):
        return values[0]
    return "; ".join(f"{app}: {plan}" for app, plan in said.items())


def live(aws: Aws, config: Config, *, joining: str = "") -> tuple[LiveRoutes, Splits, LiveWeights]:
    """The shared load balancer, the live split of every application with a public rule over the configured colours in
    traffic (LiveRoutes.in_traffic: the parameter or a rule names them, or the shift's target is `joining`, at 0 where
    the parameter does not name it yet), and the parameter as read; refused when a configured application's rule does
    not forward its split (a change stopped half-way), or when a colour the configuration no longer has still holds
    weight. A colour the parameter names that the configuration dropped at weight 0 (retired), or a configured one
    already detached, is left out: the shift's first write forgets it."""
    try:
        routes = read_routes(aws.elbv2, config.project)
        found = read_live(aws.ssm, config.project)
    except RoutesError as err:
        raise UnsafeShiftError(str(err)) from None
    if stray := {colour: weight for colour, weight in found.colours.items() if colour not in config.clusters and weight}:
        raise UnsafeShiftError(
            f"the live weights give {describe(stray)}, but the configuration has no such colour: move that traffic to a "
            "configured colour first with `python -m tools.shift --to <colour> --now` (nothing was changed)"
        )
    colours = routes.in_traffic(config.clusters, found.colours, joining=joining)
    splits = {app: {colour: found.of(app).get(colour, 0) for colour in colours} for app in routes.public}
    configured = {app.name for app in applications(config)}
    ours = {app: split for app, split in splits.items() if app in configured}
    if wrong := off_weights(routes, ours):
        differing = {app: ours[app] for app in ours if off_weights(routes, {app: ours[app]})}
        raise UnsafeShiftError(
            f"the load balancer forwards {'; '.join(wrong)}, not the live weights {describe_splits(differing)} (a change "
            "stopped half-way?): settle it with `python -m tools.shift --to <colour> --now`, nothing was changed"
        )
    return routes, splits, found


def refuse_unroutable(config: Config, routes: LiveRoutes, target: str, *, only: Collection[str] | None = None) -> None:
    """Every application (only: of these) needs its public rule, and a target group of the target colour, before weight
    moves there."""
    apps = [app.name for app in applications(config) if only is None or app.name in only]
    if not apps:
        raise UnsafeShiftError("no applications are configured: there is no traffic to move")
    without_rule = [app for app in apps if app not in routes.public]
    without_group = [app for app in apps if (app, target) not in routes.target_groups]
    if without_rule or without_group:
        said = [f"no public rule for {', '.join(without_rule)}"] if without_rule else []
        said += [f"no target group of {target} for {', '.join(without_group)}"] if without_group else []
        raise UnsafeShiftError(f"{'; '.join(said)}: deploy the traffic stack first (cdktf deploy traffic); nothing changed")


def unhealthy_groups(elbv2: object, groups: Mapping[str, str]) -> list[str]:
    """The applications whose target group has no healthy target."""
    return without_healthy(target_health(elbv2, groups))


def target_health(elbv2: object, groups: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    """Each application's target group's healthy and registered targets."""
    found = {}
    for app, arn in groups.items():
        health = elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]  # type: ignore[attr-defined]
        found[app] = (sum(target["TargetHealth"]["State"] == "healthy" for target in health), len(health))
    return found


def without_healthy(health: Mapping[str, tuple[int, int]]) -> list[str]:
    """The applications with no healthy target, of target_health's counts."""
    return [app for app, (healthy, _) in health.items() if not healthy]
