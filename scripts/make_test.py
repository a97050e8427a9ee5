"""`make test`: ruff, mypy and every test, in tiers side by side.

    python -m scripts.make_test

The out-of-process tier spends most of its time in other programs: the emulator rehearsal (`-m rehearsal`:
`cdktf deploy common`, `cdktf destroy common`) mostly waits on the AWS provider's own waits (Route53 changes, a
NAT gateway); the other checks (`-m background`: `cdktf synth`, `terraform validate`, checkov, Terraform's plans
against the emulator, Terraform running the destroy hook) run in other programs too. Each runs in a pytest process
of its own from the start (the rehearsal must not wait for the checks' syntheses), and so does the emulated tier
(whole operator runs against moto in-process: `-m emulated`), while the unit tier (every other in-process test) runs
in the foreground, and ruff and mypy one after another beside it, behind it for the CPU as the
checks are (on a fresh clone mypy's cold run and ruff took the unit tier's first ~19 s, and the unit tier was
`make test`'s longest chain by ~10 s). Their output follows. Every step runs, so one run reports every failure; the
exit status is 1 when any failed.

The rehearsal is the long pole: most of it waits on the AWS provider's own timers, and when it needs a CPU it must
not queue behind the suite, or every wait ends later. So it starts first, at this process's priority, and everything
started after it runs at niceness 10 (it fills the CPUs while the rehearsal waits). On a quiet 2-core host the whole
run then takes about as long as the rehearsal alone, instead of ~50 s more. The other out-of-process checks run at
niceness 15, behind the unit tier: the unit tier is one process on one core, so whichever of the two ends last ends
`make test`, and the checks' tier can still use both cores then (its checks run side by side on threads).

It is bound by CPU too (~370 CPU-seconds on 2 cores: both are busy from its fifth second to its last few), over a
third of it Terraform's and the AWS provider's, ~70 processes of Go that each allocate a few hundred MB and exit
within seconds: their garbage collector waits for the heap to grow by 800%, not 100% (GOGC=800; GOMEMLIMIT caps
each process at 1 GiB all the same). Measured on the rehearsal tier alone: 180.6 CPU-s by default, 159.6 at
GOGC=400, 154.3 at 800, 166 with the collector off up to 512 MiB (the kernel's cost of fresh pages outgrows what the
collector saves); a plan of common peaks at ~570 MB instead of ~320.
A setting of the caller's own is kept.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import IO

from model.paths import PROJECT_DIR

# The rehearsal's modules: the tier collects only these (importing every other module costs its longest path ~4 s);
# tests/conftest.py refuses a rehearsal test anywhere else, so none is ever left out.
REHEARSAL_MODULES = ("tests/test_rehearsal.py",)
REHEARSAL = ("pytest", "-m", "rehearsal", *REHEARSAL_MODULES)
BACKGROUND = ("pytest", "-m", "background")
# Whole operator runs against moto in-process (pyproject.toml's `emulated` marker): a process of their own beside the
# unit tier, at its priority. In the unit tier they were over half its time (~130 of ~250 s), so `make test-unit`,
# what a developer runs before each push, waited on them; here they run on the second core while it does.
EMULATED = ("pytest", "-m", "emulated and not background")
OUT_OF_PROCESS = (REHEARSAL, BACKGROUND, EMULATED)  # in this order: the rehearsal first
BESIDE_THE_REHEARSAL = 10  # the niceness of everything started after it
BEHIND_THE_UNIT_TIER = 5  # the background tier's on top of that
GO_GC = {"GOGC": "800", "GOMEMLIMIT": "1GiB"}  # every process of every tier inherits them
# One after another (both mypy runs write .mypy_cache), beside the unit tier and behind it for the CPU.
LINT: tuple[tuple[str, ...], ...] = (
    ("ruff", "check", "."),
    ("ruff", "format", "--check", "."),
    ("vulture",),  # dead code: pyproject.toml [tool.vulture], scripts/vulture_whitelist.py
    ("mypy",),
    ("mypy", "app/main.py"),  # apart: both it and the project's main.py are a module named `main`
)
FOREGROUND: tuple[tuple[str, ...], ...] = (("pytest", "-m", "not rehearsal and not background and not emulated"),)


def main() -> int:
    started = time.monotonic()
    for name, value in GO_GC.items():
        os.environ.setdefault(name, value)
    with ExitStack() as stack:
        beside = []
        for command in OUT_OF_PROCESS:
            output = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
            lower = functools.partial(os.nice, BEHIND_THE_UNIT_TIER) if command == BACKGROUND else None
            process = subprocess.Popen(command, cwd=PROJECT_DIR, stdout=output, stderr=subprocess.STDOUT, preexec_fn=lower)
            beside.append((command, output, process))
            if command == REHEARSAL:
                os.nice(BESIDE_THE_REHEARSAL)  # this process, and so whatever it starts from now on
        lint_output = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
        lint_failed: list[str] = []
        lint = threading.Thread(target=_lint, args=(lint_output, lint_failed))
        lint.start()
        failed = [" ".join(command) for command in FOREGROUND if _run(command) != 0]
        lint.join()
        print("\nruff and mypy (beside the unit tier since the start):", flush=True)
        lint_output.seek(0)
        sys.stdout.write(lint_output.read())
        failed = [*lint_failed, *failed]
        for command, output, process in beside:
            print(f"\n{' '.join(command)} (beside the rest since the start):", flush=True)
            status = process.wait()
            output.seek(0)
            sys.stdout.write(output.read())
            if status != 0:
                failed.append(" ".join(command))
    seconds = time.monotonic() - started
    print(f"\nmake test: {'FAILED: ' + '; '.join(failed) if failed else 'everything passed'} ({seconds:.0f} s)", flush=True)
    return 1 if failed else 0


def _lint(output: IO[str], failed: list[str]) -> None:
    """LINT's commands in turn, each behind the unit tier; their output in output, each failing one in failed."""
    for command in LINT:
        output.write(f"{' '.join(command)}\n")
        output.flush()  # before the command's own output, which goes to the same file
        # `nice`, not a preexec_fn: this runs on a thread beside the foreground's, and a preexec_fn is not safe there.
        behind = ("nice", "-n", str(BEHIND_THE_UNIT_TIER), *command)
        process = subprocess.Popen(behind, cwd=PROJECT_DIR, stdout=output, stderr=subprocess.STDOUT)
        if process.wait() != 0:
            failed.append(" ".join(command))


def _run(command: Sequence[str]) -> int:
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=PROJECT_DIR, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
