"""The gated shift: under the traffic lock, from the live weights to the target in steps, each one change of every
application's weighted rule (and of the weights parameter first), in effect once the rules read back; watched for the
window, the target's target groups' health polled meanwhile; every application judged on its own; a breach by any
one rolls every application back in one change. No Terraform, no colour's Kubernetes API: only the load balancer,
the parameter and CloudWatch (readiness, before the first step, is the target's to pass)."""

from __future__ import annotations

import math
from collections.abc import Mapping
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
    read_routes,
    read_weights,
    stickiness_config,
    write_rules,
    write_weights,
)
from tools.readiness import Readiness, missing
from tools.shift import ShiftError, ShiftLockLostError, UnsafeShiftError
from tools.shift.events import Kind, ShiftEvents, verdict_values
from tools.shift.gate import describe_gate, is_idle, judge
from tools.shift.judged import bake, breached, describe_analysis, subjects
from tools.shift.metrics import METRICS_DELAY_SECONDS, WindowMetrics, describe_metrics, gate_values, read_metrics
from tools.shift.plan import describe, plan_weights
from tools.shift.progress import Progress
from tools.signals import deferred
from tools.traffic_lock import TrafficLock

# How long the load balancer may take to show a rule change on reading it back (it applies in seconds).
IN_EFFECT_SECONDS = 120


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
    progress: Progress | None = None  # told each poll of a window (the time left, healthy targets); default: no one
    _offset: timedelta = timedelta(0)  # AWS's clock minus the local one, as the last answer gave it

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
                plan, routes, weights = self._prepare(target)
                if plan:
                    with self.events.running(self._each(weights), plan=plan, interval_seconds=self.settings.interval_seconds):
                        self._shift(target, plan, routes, weights)
            finally:
                self.clock, self.readiness = waiting, checks

    def _prepare(self, target: str) -> tuple[list[Weights], LiveRoutes, Weights]:
        if self.aws_time:
            self._set_offset(self.aws.sts.get_caller_identity(), refuse=UnsafeShiftError)
        routes, weights = live(self.aws, self.config, joining=target)
        plan = plan_weights(weights, target, self.settings.step)
        if not plan:
            self._say(f"{target} already has all the traffic ({describe(weights)}): nothing to do")
            return plan, routes, weights
        self._say(f"live weights: {describe(weights)}; plan: {' -> '.join(describe(s) for s in plan)}")
        refuse_unroutable(self.config, routes, target)
        if unready := self._readiness(target):
            raise unready
        return plan, routes, weights

    def _shift(self, target: str, plan: list[Weights], routes: LiveRoutes, weights: Weights) -> None:
        unproven = " | READINESS NOT CHECKED (--skip-readiness)" if self.skip_readiness else ""
        self._say(
            f"shifting to {target}: {describe(weights)} -> {describe(plan[-1])} in {len(plan)} step(s); each step is "
            f"watched for {self.settings.interval_seconds} s ({describe_gate(self.settings)}){unproven}"
        )
        for line in describe_analysis(self.config, self.settings, target):
            self._say(line)
        previous = weights  # what a stop rolls back to: the last split whose window passed
        try:
            for number, state in enumerate(plan, 1):
                self._step(f"step {number}/{len(plan)}  {describe(state)}", state, previous, routes, target, len(plan) - number)
                before, previous = previous, state
            if seconds := bake(self.config, self.settings):
                # The final split's bake window is unjudged until it passes: a breach or a stop in it goes back a step.
                final, previous = previous, before
                self._say(f"baking {describe(final)} for {seconds} s before done (the traffic lock held)")
                self._window(f"bake  {describe(final)}", final, seconds, previous, routes, target, self.clock.now(), 0)
                previous = final
        except KeyboardInterrupt as stop:
            self._roll_back(previous, routes, f"interrupted ({stop or 'SIGINT'})")
        self._say(f"done: {describe(previous)}")

    def _step(self, label: str, state: Weights, previous: Weights, routes: LiveRoutes, target: str, left: int) -> None:
        started = self.clock.now()
        try:
            calls = self._apply(state, routes)
        except ShiftLockLostError:
            raise
        except ShiftError as err:
            self._roll_back(previous, routes, f"{label}: {err}")
        self._say(f"{label}  | in effect ({calls} rule change(s)); watching {target}")
        self.events.emit(Kind.STEP, self._each(state), step=label, rule_changes=calls)
        self._window(label, state, self.settings.interval_seconds, previous, routes, target, started, left)

    def _window(
        self,
        label: str,
        state: Weights,
        seconds: int,
        previous: Weights,
        routes: LiveRoutes,
        target: str,
        started: datetime,
        left: int,
    ) -> None:
        """The split in place (state) watched for seconds, then judged (the gate, every application's analysis): a
        breach rolls back to previous. left: the steps after this one, for the estimate of the time left."""
        window = 60 * math.ceil(seconds / 60)  # whole minutes, as CloudWatch keeps ALB metrics
        # The window: whole minutes of AWS's clock (CloudWatch's), from the next one on.
        now = self.clock.now() + self._offset
        wait = (60 - now.second - now.microsecond / 1e6) % 60
        self.clock.sleep(wait)
        window_start = (now + timedelta(seconds=wait)).replace(microsecond=0)
        try:
            unhealthy = self._watch(routes, target, window, label)
        except ShiftError as err:  # AWS stopped answering meanwhile (expired credentials, say): the split is unjudged
            self._roll_back(previous, routes, f"{label}: cannot watch {target}'s target groups: {err}")
        if unhealthy:
            self._roll_back(previous, routes, f"{label}: {unhealthy}")
        self.clock.sleep(METRICS_DELAY_SECONDS)
        try:
            with aws_errors_as(ShiftError):
                windows = self._metrics(routes, target, window_start, window)
        except ShiftError as err:
            self._roll_back(previous, routes, f"{label}: cannot read the window's metrics: {err}")
        breaches = judge(windows, self._minimums(), self.settings)
        for app, metrics in windows.items():
            verdict = "GATE TRIPPED" if app in breaches else "IDLE" if is_idle(metrics, self._minimums()[app]) else "ok"
            self._say(f"    {app}: {describe_metrics(metrics)} | {verdict}")
        verdicts = self._analyse(target, Window(window_start, window_start + timedelta(seconds=window)))
        for app, why in breached(verdicts).items():
            breaches[app] = f"{breaches[app]}; {why}" if app in breaches else why
        self.events.emit(
            Kind.VERDICT,
            self._each(state),
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
            self._roll_back(previous, routes, f"{label}: " + "; ".join(f"{app}: {why}" for app, why in breaches.items()))

    def _analyse(self, target: str, window: Window) -> dict[str, list[Verdict]]:
        """Every application's analysis of the window, each verdict said on a line of its own, and returned by
        application. One call for all applications (CloudWatch asked once per kind)."""
        found = subjects(self.config, self.settings, target)
        if not found:
            return {}
        sources = Sources(cloudwatch=self.aws.cloudwatch, credentials=self.aws.credentials, opener=self.opener, clock=self.clock)
        verdicts = judge_window(found, window, sources)
        for app, mine in verdicts.items():
            for verdict in mine:
                self._say(f"    {app}: {verdict.line()}")
        return verdicts

    def _apply(self, state: Weights, routes: LiveRoutes) -> int:
        """The parameter (the intent) first, then every application's rule; returns once the rules read back at state.
        AWS errors fail the step (it is rolled back, or the roll-back says it could not be). Nothing is written once
        the lock is no longer this run's."""
        with aws_errors_as(ShiftError):
            self._still_locked(state)
            write_weights(self.aws.ssm, self.config.project, state)
            answers: list[Any] = []
            calls = write_rules(
                self.aws.elbv2, routes, state, colours=self.config.clusters, stickiness=self._stickiness, answers=answers
            )
            if self.aws_time and answers:
                self._set_offset(answers[-1], refuse=ShiftError)
            self._wait_in_effect(state)
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

    def _still_locked(self, state: Weights) -> None:
        """The lock is still this run's, or ShiftLockLostError: a drain broke it to move the traffic itself. (Each write is
        fenced again as it is sent: TrafficLock.fenced.)"""
        try:
            self.lock.fence(ShiftLockLostError)
        except ShiftLockLostError as err:
            raise ShiftLockLostError(f"{err}: this shift stopped before writing {describe(state)}") from None

    def _wait_in_effect(self, state: Weights) -> None:
        deadline = self.clock.now() + timedelta(seconds=IN_EFFECT_SECONDS)
        while True:
            wrong = off_weights(read_routes(self.aws.elbv2, self.config.project), state)
            if not wrong:
                return
            if self.clock.now() >= deadline:
                raise ShiftError(f"after {IN_EFFECT_SECONDS} s the load balancer still forwards {'; '.join(wrong)}")
            self.clock.sleep(POLL_SECONDS)

    def _watch(self, routes: LiveRoutes, target: str, seconds: int, label: str) -> str | None:
        """The window passing, the target's target groups' health polled: one without a healthy target ends it at once
        (the load balancer would keep sending that application's share to failing pods until the window closed). Each
        poll is the progress's too (label: the step's), and the window's close, after which it is judged."""
        end = self.clock.now() + timedelta(seconds=seconds)
        health: dict[str, tuple[int, int]] = {}
        while (now := self.clock.now()) < end:
            with aws_errors_as(ShiftError):
                health = target_health(self.aws.elbv2, routes.of_colour(target))
            if self.progress is not None:
                self.progress.watching(label=label, until=end, now=now, health=health)
            if empty := without_healthy(health):
                return f"no healthy target in {target}'s target group of {', '.join(empty)}: rolled back without waiting"
            self.clock.sleep(min(POLL_SECONDS, max(0.0, (end - self.clock.now()).total_seconds())))
        if self.progress is not None:
            self.progress.watching(label=label, until=end, now=self.clock.now(), health=health)
        return None

    def _metrics(self, routes: LiveRoutes, target: str, start: object, window: int) -> dict[str, WindowMetrics]:
        groups = routes.of_colour(target)
        return {
            app.name: read_metrics(self.aws.cloudwatch, routes.load_balancer_arn, groups[app.name], start, window)  # type: ignore[arg-type]
            for app in applications(self.config)
        }

    def _each(self, state: Mapping[str, int]) -> dict[str, dict[str, int]]:
        """The split every application has (the shift moves them together)."""
        return {app.name: dict(state) for app in applications(self.config)}

    def _minimums(self) -> dict[str, int]:
        return {
            app.name: self.settings.min_requests if app.config.min_requests is None else app.config.min_requests
            for app in applications(self.config)
        }

    def _roll_back(self, previous: Weights, routes: LiveRoutes, reason: str) -> NoReturn:
        self._say(f"rolling back to {describe(previous)}: {reason}")
        self.events.emit(Kind.ROLLBACK, self._each(previous), reason=reason)
        try:
            with deferred():  # a second stop (a cancelled run's SIGTERM after its SIGINT) waits for the roll-back
                self._apply(previous, routes)
        except ShiftLockLostError as err:
            raise ShiftLockLostError(f"{reason}; not rolled back: {err}") from None
        except ShiftError as err:
            raise ShiftError(
                f"{reason}; the roll-back to {describe(previous)} failed too: {err}. Move the traffic with "
                f"`python -m tools.shift --to <colour> --now`, and check it with --status"
            ) from None
        raise ShiftError(f"{reason}; rolled back to {describe(previous)}")

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


def live(aws: Aws, config: Config, *, joining: str = "") -> tuple[LiveRoutes, Weights]:
    """The shared load balancer and the live weights of the configured colours in traffic (LiveRoutes.in_traffic: the
    parameter or a rule names them, or the shift's target is `joining`, at 0 where the parameter does not name it yet);
    refused when the rules do not forward what the parameter says (a change stopped half-way), or when a colour the
    configuration no longer has still holds weight. A colour the parameter names that the configuration dropped at
    weight 0 (retired), or a configured one already detached, is left out: the shift's first write forgets it."""
    try:
        routes = read_routes(aws.elbv2, config.project)
        found = read_weights(aws.ssm, config.project)
    except RoutesError as err:
        raise UnsafeShiftError(str(err)) from None
    if stray := {colour: weight for colour, weight in found.items() if colour not in config.clusters and weight}:
        raise UnsafeShiftError(
            f"the live weights give {describe(stray)}, but the configuration has no such colour: move that traffic to a "
            "configured colour first with `python -m tools.shift --to <colour> --now` (nothing was changed)"
        )
    weights = {colour: found.get(colour, 0) for colour in routes.in_traffic(config.clusters, found, joining=joining)}
    if wrong := off_weights(routes, weights):
        raise UnsafeShiftError(
            f"the load balancer forwards {'; '.join(wrong)}, not the live weights {describe(weights)} (a change stopped "
            "half-way?): settle it with `python -m tools.shift --to <colour> --now`, nothing was changed"
        )
    return routes, weights


def off_weights(routes: LiveRoutes, weights: Mapping[str, int]) -> list[str]:
    """Each application whose rule forwards other weights than these (a colour without a target group in its rule
    counts as 0)."""
    return [
        f"{app}: {describe(route.weights)}"
        for app, route in routes.public.items()
        if any(route.weights.get(colour, 0) != weight for colour, weight in weights.items())
        or any(weight and colour not in weights for colour, weight in route.weights.items())
    ]


def refuse_unroutable(config: Config, routes: LiveRoutes, target: str) -> None:
    """Every application needs its public rule, and a target group of the target colour, before weight moves there."""
    apps = [app.name for app in applications(config)]
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
