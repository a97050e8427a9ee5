"""`terraform apply` of each named stack, in the order given (the workflow gives common, then traffic, then a colour),
from cdktf.out: what `cdktf deploy <stack>` does, after `make synth`, the result in the job summary.

    python -m scripts.ci.deploy_stacks common traffic

Stops at the first failure: a colour reads common's and traffic's state, so nothing after a failed stack is applied.
Which stacks (and that a serving colour is never among them unless its own entry changed): scripts/ci/changed_stacks.py.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from model.paths import PROJECT_DIR
from scripts.ci.stacks import details, summary, terraform


def deploy(project: Path, stack: str) -> bool:
    for step in (("init",), ("apply", "-auto-approve")):
        done = terraform(project, stack, *step)
        print(done.stdout + done.stderr, flush=True)
        if done.returncode != 0:
            summary(f"### Deploy of `{stack}`: {step[0]} FAILED\n\n" + details(f"terraform {step[0]}", done.stdout + done.stderr))
            return False
    last = next((line for line in reversed(done.stdout.splitlines()) if line.startswith("Apply complete")), "applied")
    summary(f"### Deploy of `{stack}`: {last}")
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.ci.deploy_stacks", description=__doc__.split("\n\n")[0])
    parser.add_argument("stacks", nargs="+", help="stack names, in deploy order")
    parser.add_argument("--project-dir", type=Path, default=PROJECT_DIR, help="the synthesized checkout")
    args = parser.parse_args(argv)
    for stack in args.stacks:
        if not deploy(args.project_dir, stack):
            print(f"deploy_stacks: {stack} failed; nothing after it was applied", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
