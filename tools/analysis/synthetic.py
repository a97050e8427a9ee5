"""Synthetic checks: GET requests the shift itself sends to an application through its preview host (the target
colour's, whatever the weights) or its public host (the split users get), each of which must answer with the expected
status and hold the expected JSON fields. Nothing here is idle: a request is evidence, and one without an answer, or
with another one, breaches."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from model.config.analysis import HostKind, SyntheticCheck
from tools.analysis.http import TIMEOUT_SECONDS, Answer, Opener
from tools.analysis.verdict import SYNTHETIC, Verdict
from tools.clock import Clock

# Between two requests of one check: N requests are N moments of the window, not one burst.
INTERVAL_SECONDS = 1.0
USER_AGENT = "eks-bg-shift-analysis"


def holds(got: Any, expected: Any) -> bool:
    """got holds expected: every field of an expected object, recursively; anything else equal (and true is not 1)."""
    if isinstance(expected, Mapping):
        return isinstance(got, Mapping) and all(key in got and holds(got[key], value) for key, value in expected.items())
    return bool(got == expected) and isinstance(got, bool) == isinstance(expected, bool)


def wrong(answer: Answer, check: SyntheticCheck) -> str | None:
    """Why an answer fails the check, or None."""
    if answer.status != check.expect_status:
        return f"HTTP {answer.status}, not {check.expect_status} ({answer.text(100) or 'no body'})"
    if not check.expect_json:
        return None
    try:
        got = json.loads(answer.body)
    except ValueError:
        return f"not a JSON answer ({answer.text(100)})"
    if not holds(got, check.expect_json):
        return f"the JSON answer {answer.text(100)} does not hold {json.dumps(dict(check.expect_json))}"
    return None


def judge_check(check: SyntheticCheck, hosts: Mapping[HostKind, str], *, opener: Opener, clock: Clock) -> Verdict:
    """hosts: the application's base URLs by kind (`https://<host>-<colour>.<sub-zone>`, `https://<host>.<sub-zone>`)."""
    url = f"{hosts[check.host].rstrip('/')}{check.path}"
    failures: list[str] = []
    for number in range(1, check.count + 1):
        try:
            answer = opener(url, headers={"Accept": "application/json", "User-Agent": USER_AGENT}, timeout=TIMEOUT_SECONDS)
        except OSError as err:
            failures.append(f"no answer ({err})")
        else:
            if why := wrong(answer, check):
                failures.append(why)
        if number < check.count:
            clock.sleep(INTERVAL_SECONDS)
    expected = f"HTTP {check.expect_status}" + (f" holding {json.dumps(dict(check.expect_json))}" if check.expect_json else "")
    detail = f"{len(failures)} of {check.count} request(s) failed, threshold 0 (expected {expected})"
    if failures:
        detail += f"; first: {failures[0]}"
    return Verdict(SYNTHETIC, f"GET {url}", len(failures), 0, bool(failures), detail)
