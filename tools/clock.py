"""Time for the operator commands: real by default, a fake in the tests; and how often they poll."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol

POLL_SECONDS = 10  # between two readings of AWS or Kubernetes while a command waits for a change


class Clock(Protocol):
    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
