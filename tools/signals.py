"""The ways an operator command is stopped in the field, made one: Ctrl-C (SIGINT), a cancelled CI run (GitHub's runner
sends SIGINT, then SIGTERM a few seconds later, then kills), a dropped SSH session (SIGHUP), `kill` (SIGTERM).

Each becomes an `Interrupted` (a KeyboardInterrupt, which the commands already handle: the shift rolls its step back,
the lock is released, the command says what traffic is in place). What must not be cut in two (a roll-back, a drain's
one change, the lock's release) runs inside `deferred()`: a signal that comes meanwhile is noted, and the clean-up
finishes first; the interrupt it stands for is already being served, so it is not raised again afterwards.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

# What stops a command: Ctrl-C, a cancelled run's or `kill`'s SIGTERM, a closed terminal's SIGHUP.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop; str() is the signal's name."""


_deferring = 0
_noted: list[str] = []


def handle_stops() -> None:
    """Turn every stopping signal into Interrupted from here on (the main thread of a command's process only)."""
    _noted.clear()
    for stop in STOPPING:
        signal.signal(stop, _interrupt)


def _interrupt(number: int, _frame: FrameType | None) -> None:
    name = signal.Signals(number).name
    if _deferring:
        _noted.append(name)
        return
    raise Interrupted(name)


@contextmanager
def deferred() -> Iterator[None]:
    """Inside, a stopping signal waits: what runs here finishes (it is what the stop asked for, or must not be half
    done). Nested uses are fine."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1


def noted() -> list[str]:
    """The signals that came while deferred (for the command's last line)."""
    return list(_noted)
