"""Time for the operator commands: real by default, a fake in the tests; and how often they poll."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

POLL_SECONDS = 10  # between two readings of AWS or Kubernetes while a command waits for a change


class Clock(Protocol):
    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


# The gate judges CloudWatch's minutes by AWS's clock; a local clock further off than this is refused (a window taken
# from a clock 5 minutes behind judged the previous step's healthy minutes).
MAX_CLOCK_SKEW_SECONDS = 30


def aws_date(response: Mapping[str, Any]) -> datetime | None:
    """AWS's time as an answer's Date header gives it (to the second), or None without one."""
    date = response.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
    if not date:
        return None
    try:
        return parsedate_to_datetime(str(date)).astimezone(UTC)
    except (TypeError, ValueError):
        return None
