"""`python -m tools.shift --to <colour> --now`: every application's whole weight to one colour in one change.

For a colour that is broken: it needs neither colour's cluster, Argo CD nor ExternalDNS (only the load balancer, the
weights parameter and the lock), skips readiness and the gate (loudly), and refuses only when the target cannot
take the traffic at all: an application without a target group of the target colour, or one without a healthy
target, or a target that follows a branch (judged in command.py); `--force` goes on anyway, loudly. It returns once
every rule reads back at the new weights, and prints what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TextIO

from model.config import MAX_WEIGHT, Config, applications
from tools.aws import Aws
from tools.aws_problems import aws_errors_as
from tools.live_routes import (
    LiveRoutes,
    RoutesError,
    read_routes,
    read_weights,
    stickiness_config,
    write_rules,
    write_weights,
)
from tools.shift import ShiftError, ShiftLockLostError, UnsafeShiftError
from tools.shift.events import Kind, ShiftEvents
from tools.shift.plan import describe
from tools.shift.run import off_weights, refuse_unroutable, unhealthy_groups
from tools.signals import deferred
from tools.traffic_lock import IN_FLIGHT_SECONDS, TrafficLock

DEFAULT_TOTAL = 100  # the weight the target gets when every colour holds 0 (a broken parameter, say)


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

    def run(self, target: str, *, dry_run: bool = False) -> None:
        """dry_run: the drain's plan (each application's forward before and after) printed; nothing is written, not
        even the lock."""
        if target not in self.config.clusters:
            raise UnsafeShiftError(f"--to: {target!r} is not a configured colour; use one of {', '.join(self.config.clusters)}")
        if dry_run:
            routes, before, after = self._plan(target)
            self._say("dry run: nothing is written. --now would move, in one change (now -> after):")
            self._per_application(routes, after)
            self._say(f"weights parameter: {describe(before) or 'unreadable'} -> {describe(after)}")
            return
        writers = {"elbv2": self.aws.elbv2, "ssm": self.aws.ssm}
        with self.lock.held(break_lock=self.break_lock, say=self._say), self.lock.fenced(writers, error=ShiftLockLostError):
            routes, before, after = self._plan(target)
            self._move(routes, before, after)
            apps = [app.name for app in applications(self.config)]
            self.events.emit(
                Kind.DRAIN,
                {app: after for app in apps},
                before={app: before for app in apps},
                forced=self.force,
                broke_lock=self.lock.broke is not None,
            )
            if self.lock.broke is not None:
                self._settle(after)

    def _settle(self, after: dict[str, int]) -> None:
        """After breaking a live lock: its holder stops before its next write (fenced), but one write it had already
        sent may land seconds later. The rules and the parameter are read back for IN_FLIGHT_SECONDS, and the drain's
        split written again whenever they moved; then it is what stands."""
        clock = self.lock.clock
        self._say(f"watching {IN_FLIGHT_SECONDS} s for a write the interrupted run had already sent")
        end = clock.now() + timedelta(seconds=IN_FLIGHT_SECONDS)
        while clock.now() < end:
            clock.sleep(1)
            with aws_errors_as(ShiftError):
                routes = read_routes(self.aws.elbv2, self.config.project)
                moved = off_weights(routes, after)
                try:
                    parameter_moved = read_weights(self.aws.ssm, self.config.project) != after
                except RoutesError:  # unreadable now: it is written again like a moved one
                    parameter_moved = True
                if parameter_moved:
                    moved.append("the weights parameter")
            if moved:
                self._say(f"  the interrupted run's write landed ({'; '.join(moved)}): {describe(after)} written again")
                with aws_errors_as(ShiftError), deferred():
                    self._write(routes, after)
        self._say(f"in effect: {describe(after)} (read back for {IN_FLIGHT_SECONDS} s after taking the lock)")

    def _plan(self, target: str) -> tuple[LiveRoutes, dict[str, int], dict[str, int]]:
        """The live routes, the weights before, the weights after, and what is said before the move; refused
        (UnsafeShiftError) when the target cannot take the traffic."""
        try:
            routes = read_routes(self.aws.elbv2, self.config.project)
        except RoutesError as err:
            raise UnsafeShiftError(str(err)) from None
        try:
            before = read_weights(self.aws.ssm, self.config.project)
        except RoutesError as err:
            self._say(f"WARNING: {err}; draining from what the rules forward")
            before = {}
        refuse_unroutable(self.config, routes, target)
        empty = unhealthy_groups(self.aws.elbv2, routes.of_colour(target))
        if empty and not self.force:
            raise UnsafeShiftError(
                f"{target} has no healthy target for {', '.join(empty)}: moving all traffic there would fail those "
                "applications' requests; nothing was changed (--force moves it anyway)"
            )
        # Only the configured colours in traffic are written (LiveRoutes.in_traffic): one the configuration dropped
        # (retired, or added and removed before it was deployed) leaves the parameter and the rules, whatever weight
        # it held (now the target's); a configured one already detached (retired, not yet removed) stays out.
        colours = routes.in_traffic(self.config.clusters, before, joining=target)
        named = dict.fromkeys([*before, *(c for r in routes.public.values() for c in r.weights)])
        dropped = [c for c in named if c not in colours]
        total = min(MAX_WEIGHT, sum(before.values())) or DEFAULT_TOTAL
        after = {colour: total if colour == target else 0 for colour in colours}
        self._say(
            f"WARNING: --now: all traffic to {target} in one change, WITHOUT readiness or the metrics gate"
            + (f"; --force: {target} has no healthy target for {', '.join(empty)}" if empty else "")
            + (f"; --force: {self.moving}" if self.moving else "")
        )
        if dropped:
            self._say(f"  {', '.join(dropped)}: not in the configuration, taken out of the weights and the rules")
        return routes, before, after

    def _per_application(self, routes: LiveRoutes, after: dict[str, int]) -> None:
        for app in applications(self.config):
            was = routes.public[app.name].weights if app.name in routes.public else {}
            self._say(f"  {app.name}: {describe(was)} -> {describe(after)}")

    def _move(self, routes: LiveRoutes, before: dict[str, int], after: dict[str, int]) -> None:
        try:
            # One change, never half of one: a stop that comes meanwhile waits for the rules to be written.
            with aws_errors_as(ShiftError), deferred():
                calls = self._write(routes, after)
                wrong = off_weights(read_routes(self.aws.elbv2, self.config.project), after)
        except ShiftLockLostError:
            raise  # another run broke this drain's lock: what stands is its to say
        except ShiftError as err:
            raise ShiftError(f"{err}; the weights parameter says {describe(after)}: run the same command again") from None
        if wrong:
            raise ShiftError(f"the load balancer still forwards {'; '.join(wrong)}: run the same command again")
        self._per_application(routes, after)
        self._say(f"done in {calls} rule change(s), in effect: {describe(after)} (was {describe(before) or 'unknown'})")

    def _write(self, routes: LiveRoutes, after: dict[str, int]) -> int:
        """The parameter, then every application's rule (each write fenced: TrafficLock.fenced); how many rules."""
        write_weights(self.aws.ssm, self.config.project, after)
        return write_rules(
            self.aws.elbv2,
            routes,
            after,
            colours=self.config.clusters,
            stickiness=stickiness_config(self.config.traffic.stickiness_seconds),
        )

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)
