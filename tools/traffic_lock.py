"""The traffic lock: one change of the weights at a time, for the whole team, wherever it runs from; every write of a
holder fenced; a dead holder's lock expiring by itself.

Parameter Store has one atomic operation, PutParameter without Overwrite (ParameterAlreadyExists when the name
exists), so each taking of the lock is a new parameter under `/<project>/traffic/locks/`, numbered one above the
latest: two runs that take it from the same state (two breakers, or a breaker and a run taking a stale lock) try the
same number, and exactly one of them creates it. The holder is the latest number's; nothing else ever overwrites it.

- **Fencing.** Before every write of the weights or of a rule (each attempt of it, retries included, at the moment
  the SDK builds the request: `fenced`), the holder reads the path again: a newer number means the lock was taken
  from it (a drain with --break-lock), and the write is not sent (LockLostError). A write already on the wire when the
  lock is broken lands at most seconds later: the drain that broke a live lock watches the rules that long and
  writes its split again if they changed.
- **Lease.** The holder renews its parameter while it waits (each sleep of its clock: `renewing`); a holder that
  stops (killed, its machine gone) stops renewing, and LEASE_SECONDS after its last renewal its lock is stale:
  `--status` says "stale since", and the next run takes it over, saying whose it was.
- **Release.** Every parameter up to the holder's own is deleted: nothing is left behind. A release that fails (the
  credentials expired) is said, not raised over what the command did: the lock then goes stale by itself.

A second shift, a drain or a teardown's detach refuses while the lock is held (not stale) and names the holder;
`--break-lock` takes it anyway (said).
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from model.routes import lock_path, weights_parameter
from tools.aws_problems import aws_problem
from tools.clock import Clock
from tools.signals import deferred

LEASE_SECONDS = 300  # a holder that stopped renewing (killed, its machine gone) loses the lock this long after
RENEW_SECONDS = 60  # how often a waiting holder renews its lease (well inside LEASE_SECONDS)
# How long a write may still land after the lock was broken: one already sent when the breaker took the lock (the
# SDK's read timeout bounds an attempt; the next attempt is fenced again).
IN_FLIGHT_SECONDS = 30
_NUMBER_DIGITS = 10  # the parameters' numbers, zero-padded: their names sort as their numbers do


class LockedError(Exception):
    """Someone else holds the traffic lock; nothing was changed."""


class LockLostError(Exception):
    """The lock was taken from this run (broken) while it held it: it wrote nothing after."""


@dataclass(frozen=True)
class Holder:
    who: str  # the AWS identity (its ARN)
    what: str  # the command
    since: str  # ISO 8601, UTC
    where: str  # host and process
    token: str = ""  # this taking of the lock (a UUID): what fencing compares
    lease_until: str = ""  # ISO 8601, UTC: stale after this unless renewed

    def describe(self) -> str:
        return f"{self.who} ({self.what}, on {self.where}) since {self.since}"

    def stale_at(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.lease_until)
        except ValueError:
            return None  # a holder written by an older release of this tool: never stale by itself


@dataclass(frozen=True)
class Hold:
    """One taking of the lock: its parameter, its number, its holder."""

    name: str
    number: int
    holder: Holder


@dataclass
class TrafficLock:
    ssm: Any
    sts: Any
    project: str
    what: str  # the command that takes it, for whoever meets it
    clock: Clock
    broke: Holder | None = None  # inside held(break_lock=True): whose live lock this run took
    _mine: Hold | None = None
    _renewed: datetime | None = None

    @contextmanager
    def held(self, *, break_lock: bool = False, say: Callable[[str], None] = print) -> Iterator[Holder]:
        """Hold the lock inside. A stale lock is taken over (said); a live one only with break_lock (said), and then
        `self.broke` names whose it was. The lock is released on the way out, whatever ends the inside."""
        self.broke = None
        now = self.clock.now()
        me = Holder(
            who=str(self.sts.get_caller_identity()["Arn"]),
            what=self.what,
            since=now.isoformat(timespec="seconds"),
            where=f"{socket.gethostname()} pid {os.getpid()}",
            token=str(uuid.uuid4()),
            lease_until=(now + timedelta(seconds=LEASE_SECONDS)).isoformat(timespec="seconds"),
        )
        holds = self._holds()
        latest = holds[-1] if holds else None
        if latest is not None:
            stale = self.stale_since(latest.holder)
            if stale is not None:
                say(f"the traffic lock of {latest.holder.describe()} went stale at {stale:%Y-%m-%d %H:%M:%S} UTC: taken over")
            elif break_lock:
                say(f"WARNING: --break-lock: took the traffic lock from {latest.holder.describe()}")
                self.broke = latest.holder
            else:
                raise LockedError(
                    f"the traffic of {self.project} is locked by {latest.holder.describe()}; nothing was changed. Wait "
                    "for it to finish (python -m tools.shift --status shows it); if its holder died, its lock goes stale "
                    f"{LEASE_SECONDS // 60} min after its last renewal, or run again with --break-lock"
                )
        mine = Hold(self._name(latest.number + 1 if latest else 1), latest.number + 1 if latest else 1, me)
        try:
            self.ssm.put_parameter(Name=mine.name, Value=json.dumps(asdict(me)), Type="String", Overwrite=False)
        except self.ssm.exceptions.ParameterAlreadyExists:
            first = self._holds()[-1].holder
            raise LockedError(
                f"the traffic lock of {self.project} was taken meanwhile by {first.describe()}; nothing was changed"
            ) from None
        if self._latest_token() != me.token:  # a release emptied the path meanwhile, and a run numbered from 1
            self.ssm.delete_parameter(Name=mine.name)
            raise LockedError(f"the traffic lock of {self.project} was taken meanwhile; nothing was changed")
        self._mine, self._renewed = mine, now
        self._forget(holds)  # the ones it replaced: no longer anyone's
        try:
            yield me
        finally:
            with deferred():  # released whole, whatever stop comes meanwhile
                self._release(say)

    def fence(self, error: Callable[[str], Exception] = LockLostError) -> None:
        """Still this run's lock, or `error`: someone took it (broke it) since."""
        if self._mine is None:
            return
        latest = self._holds()
        if not latest or latest[-1].holder.token != self._mine.holder.token:
            by = latest[-1].holder.describe() if latest else "nobody (it was removed)"
            raise error(f"the traffic lock is no longer this run's (now held by {by})")

    @contextmanager
    def fenced(self, clients: dict[str, Any], error: Callable[[str], Exception] = LockLostError) -> Iterator[None]:
        """Inside, every attempt of a weights write (ssm PutParameter of the weights) and of a rule write (elbv2
        ModifyRule) is fenced as the SDK builds its request: after any wait before it (a slow network, a throttled
        retry's back-off), the lock is read again and a lost lock stops the write unsent."""
        weights = weights_parameter(self.project)

        def check(request: Any, **_: Any) -> None:
            self.fence(error)

        def check_weights(request: Any, **_: Any) -> None:
            body = request.body.decode() if isinstance(request.body, bytes) else str(request.body or "")
            if weights in body:
                self.fence(error)

        hooks = []
        if "elbv2" in clients:
            hooks.append((clients["elbv2"], f"request-created.{_service(clients['elbv2'])}.ModifyRule", check))
        if "ssm" in clients:
            hooks.append((clients["ssm"], f"request-created.{_service(clients['ssm'])}.PutParameter", check_weights))
        for client, event, handler in hooks:
            client.meta.events.register(event, handler, unique_id=f"traffic-lock-fence-{id(self)}")
        try:
            yield
        finally:
            for client, event, _ in hooks:
                client.meta.events.unregister(event, unique_id=f"traffic-lock-fence-{id(self)}")

    def renew(self) -> None:
        """The lease renewed, when RENEW_SECONDS have passed since it was, and the lock is still this run's."""
        if self._mine is None or self._renewed is None:
            return
        now = self.clock.now()
        if (now - self._renewed).total_seconds() < RENEW_SECONDS or self._latest_token() != self._mine.holder.token:
            return
        renewed = replace(self._mine.holder, lease_until=(now + timedelta(seconds=LEASE_SECONDS)).isoformat(timespec="seconds"))
        self.ssm.put_parameter(Name=self._mine.name, Value=json.dumps(asdict(renewed)), Type="String", Overwrite=True)
        self._mine, self._renewed = replace(self._mine, holder=renewed), now

    def _renew_quietly(self) -> None:
        """renew(), for a holder's waits: a renewal that fails (expired credentials, throttling) is not the wait's
        error; the lease then runs out by itself, which is the truth (the next write's fence says more)."""
        try:
            self.renew()
        except Exception:  # any failure to renew means the same: the lease runs out
            return

    def renewing(self, clock: Clock) -> Clock:
        """A clock whose sleeps renew this lock's lease (in slices of RENEW_SECONDS): what a holder waits with."""
        return _RenewingClock(clock, self)

    def holder(self) -> Holder | None:
        """Who holds the lock now (stale or not), or None."""
        holds = self._holds()
        return holds[-1].holder if holds else None

    def stale_since(self, holder: Holder) -> datetime | None:
        """When the holder's lease ran out, or None while it holds it."""
        ends = holder.stale_at()
        return ends if ends is not None and ends <= self.clock.now() else None

    def _release(self, say: Callable[[str], None]) -> None:
        mine, self._mine = self._mine, None
        if mine is None:
            return
        try:
            holds = self._holds()
            if holds and holds[-1].holder.token != mine.holder.token:
                return  # taken from this run: the parameters are its new holder's to remove
            self._forget([hold for hold in holds if hold.number <= mine.number])
        except Exception as err:
            said = aws_problem(err) or f"{type(err).__name__}: {err}"
            say(
                f"WARNING: the traffic lock could not be released ({said}); it goes stale by itself at "
                f"{mine.holder.lease_until} UTC (python -m tools.shift --status shows it)"
            )

    def _forget(self, holds: list[Hold]) -> None:
        """Delete these takings of the lock, the latest last (so the path never shows an older one as the latest)."""
        for hold in sorted(holds, key=lambda hold: hold.number):
            with suppress(self.ssm.exceptions.ParameterNotFound):
                self.ssm.delete_parameter(Name=hold.name)

    def _holds(self) -> list[Hold]:
        found = []
        for page in self.ssm.get_paginator("get_parameters_by_path").paginate(Path=lock_path(self.project)):
            for parameter in page["Parameters"]:
                number = parameter["Name"].rsplit("/", 1)[-1]
                if number.isdigit():
                    found.append(Hold(parameter["Name"], int(number), _holder(parameter["Value"])))
        return sorted(found, key=lambda hold: hold.number)

    def _latest_token(self) -> str | None:
        holds = self._holds()
        return holds[-1].holder.token if holds else None

    def _name(self, number: int) -> str:
        return f"{lock_path(self.project)}/{number:0{_NUMBER_DIGITS}d}"


def _holder(value: str) -> Holder:
    try:
        return Holder(**json.loads(value))
    except (ValueError, TypeError):
        return Holder(who="?", what=value[:200], since="?", where="?")


def _service(client: Any) -> str:
    """The service's name in the SDK's event names (`elastic-load-balancing-v2`, `ssm`)."""
    return str(client.meta.service_model.service_id.hyphenize())


@dataclass
class _RenewingClock:
    clock: Clock
    lock: TrafficLock

    def now(self) -> datetime:
        return self.clock.now()

    def sleep(self, seconds: float) -> None:
        left = seconds
        while True:
            self.lock._renew_quietly()
            if left <= 0:
                return
            part = min(left, RENEW_SECONDS)
            self.clock.sleep(part)
            left -= part
