"""The traffic lock: one change of the weights at a time, for the whole team, wherever it runs from.

An SSM parameter that exists while someone holds the lock: created only if absent (PutParameter without Overwrite
fails with ParameterAlreadyExists when it exists), holding who, what and since when; deleted on release, on success,
failure or Ctrl-C alike. A second shift, a drain or a teardown's detach refuses while it exists and names the holder;
a holder that died leaves it behind, and only `--break-lock` removes it (saying whose it was).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from model.routes import lock_parameter
from tools.clock import Clock
from tools.signals import deferred


class LockedError(Exception):
    """Someone else holds the traffic lock; nothing was changed."""


@dataclass(frozen=True)
class Holder:
    who: str  # the AWS identity (its ARN)
    what: str  # the command
    since: str  # ISO 8601, UTC
    where: str  # host and process

    def describe(self) -> str:
        return f"{self.who} ({self.what}, on {self.where}) since {self.since}"


@dataclass
class TrafficLock:
    ssm: Any
    sts: Any
    project: str
    what: str  # the command that takes it, for whoever meets it
    clock: Clock

    @contextmanager
    def held(self, *, break_lock: bool = False, say: Any = print) -> Iterator[Holder]:
        """Hold the lock inside; break_lock first removes a lock someone else left (said)."""
        name = lock_parameter(self.project)
        me = Holder(
            who=str(self.sts.get_caller_identity()["Arn"]),
            what=self.what,
            since=self.clock.now().isoformat(timespec="seconds"),
            where=f"{socket.gethostname()} pid {os.getpid()}",
        )
        if break_lock:
            left = self.holder()
            if left is not None:
                self.ssm.delete_parameter(Name=name)
                say(f"WARNING: --break-lock: removed the traffic lock of {left.describe()}")
        try:
            self.ssm.put_parameter(Name=name, Value=json.dumps(asdict(me)), Type="String", Overwrite=False)
        except self.ssm.exceptions.ParameterAlreadyExists:
            held = self.holder()
            by = held.describe() if held else "someone (its holder cannot be read)"
            raise LockedError(
                f"the traffic of {self.project} is locked by {by}; nothing was changed. Wait for it to finish "
                "(python -m tools.shift --status shows it); if its holder died, run again with --break-lock"
            ) from None
        try:
            yield me
        finally:
            with deferred():  # released whole, whatever stop comes meanwhile
                if self.holder() == me:  # never someone else's, should ours have been broken meanwhile
                    self.ssm.delete_parameter(Name=name)

    def holder(self) -> Holder | None:
        try:
            value = self.ssm.get_parameter(Name=lock_parameter(self.project))["Parameter"]["Value"]
        except self.ssm.exceptions.ParameterNotFound:
            return None
        try:
            return Holder(**json.loads(value))
        except (ValueError, TypeError):
            return Holder(who="?", what=value[:200], since="?", where="?")
