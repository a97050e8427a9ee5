"""The field, around an operator command run in its own process by a test: what the machine and the network would be,
set from outside the code under test. Python imports `sitecustomize` at start-up from the path; a test puts this
directory on PYTHONPATH and says what it wants in the FIELD variable (JSON; tests/support/field_run.py writes it):

- `clock_scale`: time runs faster. Every sleep of s seconds takes s * scale real seconds and moves the process's clock
  on by the rest (time.monotonic, and the commands' clock, tools.clock), so a shift's five-minute windows and a
  destroy hook's waits pass in seconds while the reads of CloudWatch, the lock's timestamps and the waits all see one
  consistent (virtual) time; AWS's clock (each answer's Date) keeps pace.
- `hosts` and `https_port`: each host name resolves to 127.0.0.1, and port 443 there reaches the loopback port
  `https_port`: the preview hosts, served by a test's HTTPS server (whose certificate authority SSL_CERT_FILE names).
- `clock_offset_seconds`: this machine's clock is that far off AWS's (negative: behind); AWS's answers keep theirs.
- `aws`: faults of AWS calls, through botocore's own event hooks, each {"operation": "<Service>.<Operation>", and one
  of "delay": seconds (a slow network, a throttled retry), "expire_after": seconds from start (then ExpiredToken),
  "throttle": count (that many ThrottlingException answers first)}.

Nothing here is imported by the product; nothing in the product knows it exists.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from datetime import timedelta
from typing import Any

_FIELD: dict[str, Any] = json.loads(os.environ.get("FIELD", "{}") or "{}")
_REAL_SLEEP = time.sleep
_STARTED = time.monotonic()


def _clock(scale: float) -> None:
    """Every sleep (time.sleep: the commands' clock, the destroy hooks' waits, the SDK's retries) takes scale of its
    time and moves the clock on by the rest: time.monotonic and the commands' clock (tools.clock) see it."""
    skipped = [0.0]
    real_monotonic = time.monotonic

    def sleep(seconds: Any) -> None:
        _REAL_SLEEP(max(0.0, float(seconds)) * scale)
        skipped[0] += max(0.0, float(seconds)) * (1 - scale)

    time.sleep = sleep
    time.monotonic = lambda: real_monotonic() + skipped[0]
    sys.path.insert(0, os.getcwd())  # the project: `python -m` puts it on the path only after start-up
    import tools.clock

    real_now = tools.clock.SystemClock.now
    tools.clock.SystemClock.now = lambda self: real_now(self) + timedelta(seconds=skipped[0])  # type: ignore[method-assign]

    def aws_keeps_pace(response_dict: Any, **_: Any) -> None:
        """AWS's clock (each answer's Date) runs as fast as the process's: the world's time, not only the command's."""
        from email.utils import format_datetime, parsedate_to_datetime

        headers = response_dict.get("headers") or {}
        if headers.get("date"):
            headers["date"] = format_datetime(parsedate_to_datetime(headers["date"]) + timedelta(seconds=skipped[0]), usegmt=True)

    _on_every_session("before-parse", aws_keeps_pace)


def _clock_offset(seconds: float) -> None:
    """This machine's clock is `seconds` off (negative: behind) AWS's: the commands' clock (tools.clock), not AWS's
    answers."""
    sys.path.insert(0, os.getcwd())
    import tools.clock

    real_now = tools.clock.SystemClock.now
    tools.clock.SystemClock.now = lambda self: real_now(self) + timedelta(seconds=seconds)  # type: ignore[method-assign]


def _on_every_session(event: str, handler: Any) -> None:
    """handler on `event` of every botocore session made from now on (each client's events start from its session's)."""
    import botocore.session

    original = botocore.session.Session.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.register(event, handler)

    botocore.session.Session.__init__ = init


def _hosts(hosts: list[str], https_port: int) -> None:
    resolve, connect = socket.getaddrinfo, socket.create_connection

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return resolve("127.0.0.1" if host in hosts else host, port, *args, **kwargs)

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        if tuple(address[:2]) == ("127.0.0.1", 443):
            return connect(("127.0.0.1", https_port), *args, **kwargs)
        return connect(address, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo
    socket.create_connection = create_connection


def _aws(faults: list[dict[str, Any]]) -> None:
    from botocore.exceptions import ClientError

    throttled: dict[int, int] = {}

    def before_call(model: Any, **_: Any) -> None:
        name = f"{model.service_model.service_id.replace(' ', '')}.{model.name}"
        for number, fault in enumerate(faults):
            if fault["operation"] not in (name, "*"):
                continue
            if "delay" in fault:
                _REAL_SLEEP(float(fault["delay"]))
            if "expire_after" in fault and time.monotonic() - _STARTED >= float(fault["expire_after"]):
                error = {"Error": {"Code": "ExpiredToken", "Message": "The security token included in the request is expired"}}
                raise ClientError(error, model.name)
            if throttled.get(number, 0) < int(fault.get("throttle", 0)):
                throttled[number] = throttled.get(number, 0) + 1
                raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, model.name)

    _on_every_session("before-call", before_call)


if "clock_scale" in _FIELD:
    _clock(float(_FIELD["clock_scale"]))
if "clock_offset_seconds" in _FIELD:
    _clock_offset(float(_FIELD["clock_offset_seconds"]))
if _FIELD.get("hosts"):
    _hosts([str(host) for host in _FIELD["hosts"]], int(_FIELD["https_port"]))
if _FIELD.get("aws"):
    _aws(list(_FIELD["aws"]))
