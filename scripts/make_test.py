"""`make test`: ruff, mypy and every test, in two tiers side by side.

    python -m scripts.make_test

The out-of-process tier (`-m "rehearsal or background"`: the emulator rehearsal's `cdktf deploy common` and
`cdktf destroy common`, `terraform validate`, checkov, Terraform's plans against the emulator, Terraform running
the destroy hook) spends most of its time in other programs, the rehearsal mostly waiting on the AWS provider's own
waits (Route53 changes, a NAT gateway). It runs in a pytest process of its own from the start, while the lint, the
type check and the unit tier (everything in-process) run one after another in the foreground. Its output follows
theirs. Every step runs, so one run reports every failure; the exit status is 1 when any failed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from model.paths import PROJECT_DIR

OUT_OF_PROCESS = ("pytest", "-m", "rehearsal or background")
FOREGROUND: tuple[tuple[str, ...], ...] = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("mypy",),
    ("mypy", "app/main.py"),  # apart: both it and the project's main.py are a module named `main`
    ("pytest", "-m", "not rehearsal and not background"),
)


def main() -> int:
    started = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as beside_output:
        beside = subprocess.Popen(OUT_OF_PROCESS, cwd=PROJECT_DIR, stdout=beside_output, stderr=subprocess.STDOUT)
        failed = [" ".join(command) for command in FOREGROUND if _run(command) != 0]
        print(f"\n{' '.join(OUT_OF_PROCESS)} (beside the rest since the start):", flush=True)
        status = beside.wait()
        beside_output.seek(0)
        sys.stdout.write(beside_output.read())
    if status != 0:
        failed.append(" ".join(OUT_OF_PROCESS))
    seconds = time.monotonic() - started
    print(f"\nmake test: {'FAILED: ' + '; '.join(failed) if failed else 'everything passed'} ({seconds:.0f} s)", flush=True)
    return 1 if failed else 0


def _run(command: Sequence[str]) -> int:
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=PROJECT_DIR, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
