"""`make test`: ruff, mypy and every test, the emulator rehearsal beside the rest.

    python -m scripts.make_test

The rehearsal (tests/test_rehearsal.py: `cdktf deploy common` and `cdktf destroy common` against the
emulator) spends most of its two minutes waiting on the AWS provider's own waits (Route53 changes, a NAT
gateway), so it runs in a pytest process of its own from the start, while the lint, the type check and the
rest of the suite run one after another in the foreground. Its output follows theirs. Every step runs, so
one run reports every failure; the exit status is 1 when any failed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from model.paths import PROJECT_DIR

REHEARSAL = ("pytest", "tests/test_rehearsal.py")
FOREGROUND: tuple[tuple[str, ...], ...] = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("mypy",),
    ("mypy", "app/main.py"),  # apart: both it and the project's main.py are a module named `main`
    ("pytest", "-m", "not rehearsal"),
)


def main() -> int:
    started = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as rehearsal_output:
        rehearsal = subprocess.Popen(REHEARSAL, cwd=PROJECT_DIR, stdout=rehearsal_output, stderr=subprocess.STDOUT)
        failed = [" ".join(command) for command in FOREGROUND if _run(command) != 0]
        print(f"\n{' '.join(REHEARSAL)} (beside the rest since the start):", flush=True)
        status = rehearsal.wait()
        rehearsal_output.seek(0)
        sys.stdout.write(rehearsal_output.read())
    if status != 0:
        failed.append(" ".join(REHEARSAL))
    seconds = time.monotonic() - started
    print(f"\nmake test: {'FAILED: ' + '; '.join(failed) if failed else 'everything passed'} ({seconds:.0f} s)", flush=True)
    return 1 if failed else 0


def _run(command: Sequence[str]) -> int:
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=PROJECT_DIR, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
