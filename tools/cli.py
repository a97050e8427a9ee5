"""What the project's commands share: their exit statuses, and running the pinned cdktf CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from model.paths import PROJECT_DIR, tools_first
from tools.aws_problems import aws_problem
from tools.signals import deferred


def run_cdktf(arguments: Sequence[str], *, cwd: Path = PROJECT_DIR, env: Mapping[str, str] | None = None) -> int:
    """Exit status of `cdktf <arguments>`, with the pinned Node and the project's virtualenv first on PATH.

    Stopped meanwhile (Ctrl-C, SIGTERM, SIGHUP: tools/signals.py), it hands the CLI a SIGINT, Terraform's own way to
    stop: it finishes what it is doing, writes its state and stops; this waits for that, then the stop goes on."""
    path = tools_first(os.environ["PATH"])
    child = subprocess.Popen(["cdktf", *arguments], cwd=cwd, env={**os.environ, **(env or {}), "PATH": path})
    try:
        return child.wait()
    except KeyboardInterrupt:
        with deferred():
            child.send_signal(signal.SIGINT)
            child.wait()
        raise


def exit_status(
    action: Callable[[], None], *, refused: tuple[type[Exception], ...], failed: tuple[type[Exception], ...], prefix: str = ""
) -> int:
    """0: done; 1: failed part-way (the message says what is in place); 2: refused, nothing changed.

    An AWS SDK error that reaches here (missing, expired or refused credentials, a denied action, no network) came
    before the command changed anything: a command that has changed something turns such errors into its `failed`
    kind, saying what is in place. Either way the operator reads one line, not a traceback."""
    try:
        action()
    except refused as err:
        print(f"{prefix}refused: {err}", file=sys.stderr)
        return 2
    except failed as err:
        print(f"{prefix}failed: {err}", file=sys.stderr)
        return 1
    except Exception as err:
        said = aws_problem(err)
        if said is None:
            raise
        print(f"{prefix}refused: {said}; nothing was changed", file=sys.stderr)
        return 2
    return 0
