"""`python -m tools.shift --to <colour> --now`: every application's whole weight to one colour in one change.

For a colour that is broken: it needs neither colour's cluster, Argo CD nor ExternalDNS (only the load balancer, the
weights parameter and the lock), skips readiness and the gate (loudly), and refuses only when the target cannot
take the traffic at all: an application without a target group of the target colour, or one without a healthy
target, or a target that follows a branch (judged in command.py); `--force` goes on anyway, loudly. It returns once
every rule reads back at the new weights, and prints what changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TextIO

from model.config import MAX_WEIGHT, Config
from tools.aws import Aws
from tools.aws_problems import aws_errors_as
from tools.live_routes import LiveRoutes, RoutesError, Weights, describe, off_weights, read_routes, stickiness_config, write_rules
from tools.live_weights import LiveWeights, read_live, summary, write_live
from tools.shift import ShiftError, ShiftLockLostError, UnsafeShiftError
from tools.shift.events import Kind, ShiftEvents
from tools.shift.run import Splits, describe_splits, moving_applications, refuse_unroutable, unhealthy_groups
from tools.signals import deferred
from tools.traffic_lock import IN_FLIGHT_SECONDS, TrafficLock

DEFAULT_TOTAL = 100  # the weight the target gets when every colour holds 0 (a broken parameter, say)


@dataclass(frozen=True)
class DrainPlan:
    routes: LiveRoutes
    found: LiveWeights  # the parameter as read (or, unreadable, what the rules forward)
    before: Splits  # the drained applications' splits now
    after: Splits  # and after: all of each one's weight on the target

    def value(self) -> LiveWeights:
        """The parameter the drain writes: the drained applications at `after`, every other as it is."""
        return self.found.updated(self.after, keep=self.routes.public)


@dataclass
class Drain:
    config: Config
    aws: Aws
    out: TextIO
    lock: TrafficLock
    force: bool = False  # --force: move the traffic even to a colour without healthy targets
    break_lock: bool = False
    moving: str = ""  # with --force: why the target should not get weight (it follows a branch), said with the move
    events: ShiftEvents = field(default_factory=ShiftEvents.silent)  # told the drain
    applications: Sequence[str] = ()  # --application: only these are drained (empty: every application)

    def run(self, target: str, *, dry_run: bool = False) -> None:
        """dry_run: the drain's plan (each application's forward before and after) printed; nothing is written, not
        even the lock."""
        if target not in self.config.clusters:
            raise UnsafeShiftError(f"--to: {target!r} is not a configured colour; use one of {', '.join(self.config.clusters)}")
        if dry_run:
            plan = self._plan(target)
            self._say("dry run: nothing is written. --now would move, in one change (now -> after):")
            self._per_application(plan)
            was = describe(plan.found.colours) if plan.found.schema else "unreadable"
            self._say(f"weights parameter: {was} -> {describe(plan.value().colours)}")
            return
        writers = {"elbv2": self.aws.elbv2, "ssm": self.aws.ssm}
        with self.lock.held(break_lock=self.break_lock, say=self._say), self.lock.fenced(writers, error=ShiftLockLostError):
            plan = self._plan(target)
            self._move(plan)
            self.events.emit(
                Kind.DRAIN, plan.after, before=plan.before, forced=self.force, broke_lock=self.lock.broke is not None
            )
            if self.lock.broke is not None:
                self._settle(plan)

    def _settle(self, plan: DrainPlan) -> None:
        """After breaking a live lock: its holder stops before its next write (fenced), but one write it had already
        sent may land seconds later. The rules and the parameter are read back for IN_FLIGHT_SECONDS, and the drain's
        splits written again whenever they moved; then it is what stands."""
        clock = self.lock.clock
        self._say(f"watching {IN_FLIGHT_SECONDS} s for a write the interrupted run had already sent")
        end = clock.now() + timedelta(seconds=IN_FLIGHT_SECONDS)
        while clock.now() < end:
            clock.sleep(1)
            with aws_errors_as(ShiftError):
                routes = read_routes(self.aws.elbv2, self.config.project)
                moved = off_weights(routes, plan.after)
                try:
                    written = read_live(self.aws.ssm, self.config.project)
                    parameter_moved = any(written.of(app) != split for app, split in plan.after.items())
                except RoutesError:  # unreadable now: it is written again like a moved one
                    parameter_moved = True
                if parameter_moved:
                    moved.append("the weights parameter")
            if moved:
                self._say(
                    f"  the interrupted run's write landed ({'; '.join(moved)}): {describe_splits(plan.after)} written again"
                )
                with aws_errors_as(ShiftError), deferred():
                    self._write(replace(plan, routes=routes))
        self._say(f"in effect: {describe_splits(plan.after)} (read back for {IN_FLIGHT_SECONDS} s after taking the lock)")

    def _plan(self, target: str) -> DrainPlan:
        """The live routes, the splits before and after, and what is said before the move; refused
        (UnsafeShiftError) when the target cannot take the traffic."""
        try:
            routes = read_routes(self.aws.elbv2, self.config.project)
        except RoutesError as err:
            raise UnsafeShiftError(str(err)) from None
        drained = moving_applications(self.config, self.applications)
        try:
            found = read_live(self.aws.ssm, self.config.project)
        except RoutesError as err:
            self._say(f"WARNING: {err}; draining from what the rules forward")
            forwarded = {app: dict(route.weights) for app, route in routes.public.items()}
            found = LiveWeights(forwarded, summary(forwarded.values(), {}), 0)
        refuse_unroutable(self.config, routes, target, only=drained)
        groups = {app: arn for app, arn in routes.of_colour(target).items() if app in drained}
        empty = unhealthy_groups(self.aws.elbv2, groups)
        if empty and not self.force:
            raise UnsafeShiftError(
                f"{target} has no healthy target for {', '.join(empty)}: moving all traffic there would fail those "
                "applications' requests; nothing was changed (--force moves it anyway)"
            )
        # Only the configured colours in traffic are written (LiveRoutes.in_traffic): one the configuration dropped
        # (retired, or added and removed before it was deployed) leaves the parameter and the rules, whatever weight
        # it held (now the target's); a configured one already detached (retired, not yet removed) stays out.
        colours = routes.in_traffic(self.config.clusters, found.colours, joining=target)
        named = dict.fromkeys([*found.colours, *(c for r in routes.public.values() for c in r.weights)])
        dropped = [c for c in named if c not in colours]
        before = {app: found.of(app) for app in drained}
        after = {app: _all_to(target, colours, before[app]) for app in drained}
        which = "" if not self.applications else f" for {', '.join(drained)} (the other applications stay as they are)"
        self._say(
            f"WARNING: --now: all traffic to {target}{which} in one change, WITHOUT readiness or the metrics gate"
            + (f"; --force: {target} has no healthy target for {', '.join(empty)}" if empty else "")
            + (f"; --force: {self.moving}" if self.moving else "")
        )
        if dropped:
            self._say(f"  {', '.join(dropped)}: not in the configuration, taken out of the weights and the rules")
        return DrainPlan(routes, found, before, after)

    def _per_application(self, plan: DrainPlan) -> None:
        for app, after in plan.after.items():
            was = plan.routes.public[app].weights if app in plan.routes.public else {}
            self._say(f"  {app}: {describe(was)} -> {describe(after)}")

    def _move(self, plan: DrainPlan) -> None:
        try:
            # One change, never half of one: a stop that comes meanwhile waits for the rules to be written.
            with aws_errors_as(ShiftError), deferred():
                calls = self._write(plan)
                wrong = off_weights(read_routes(self.aws.elbv2, self.config.project), plan.after)
        except ShiftLockLostError:
            raise  # another run broke this drain's lock: what stands is its to say
        except ShiftError as err:
            raise ShiftError(
                f"{err}; the weights parameter says {describe_splits(plan.after)}: run the same command again"
            ) from None
        if wrong:
            raise ShiftError(f"the load balancer still forwards {'; '.join(wrong)}: run the same command again")
        self._per_application(plan)
        was = describe_splits(plan.before) or "unknown"
        self._say(f"done in {calls} rule change(s), in effect: {describe_splits(plan.after)} (was {was})")

    def _write(self, plan: DrainPlan) -> int:
        """The parameter, then the drained applications' rules (each write fenced: TrafficLock.fenced); how many
        rules."""
        write_live(self.aws.ssm, self.config.project, plan.value())
        return write_rules(
            self.aws.elbv2,
            plan.routes,
            plan.after,
            colours=self.config.clusters,
            stickiness=stickiness_config(self.config.traffic.stickiness_seconds),
        )

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def _all_to(target: str, colours: Sequence[str], before: Weights) -> Weights:
    """An application's whole weight on the target (the total it had, at most MAX_WEIGHT; DEFAULT_TOTAL when it had
    none), every other colour at 0."""
    total = min(MAX_WEIGHT, sum(before.values())) or DEFAULT_TOTAL
    return {colour: total if colour == target else 0 for colour in colours}
