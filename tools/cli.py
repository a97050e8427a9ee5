"""What the project's commands share: their exit statuses, and running the pinned cdktf CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from model.paths import PROJECT_DIR, tools_first


def run_cdktf(arguments: Sequence[str], *, cwd: Path = PROJECT_DIR, env: Mapping[str, str] | None = None) -> int:
    """Exit status of `cdktf <arguments>`, with the pinned Node and the project's virtualenv first on PATH."""
    path = tools_first(os.environ["PATH"])
    return subprocess.run(["cdktf", *arguments], cwd=cwd, env={**os.environ, **(env or {}), "PATH": path}, check=False).returncode


def exit_status(
    action: Callable[[], None], *, refused: tuple[type[Exception], ...], failed: tuple[type[Exception], ...], prefix: str = ""
) -> int:
    """0: done; 1: failed part-way (the message says what is in place); 2: refused, nothing changed."""
    try:
        action()
    except refused as err:
        print(f"{prefix}refused: {err}", file=sys.stderr)
        return 2
    except failed as err:
        print(f"{prefix}failed: {err}", file=sys.stderr)
        return 1
    return 0
