"""`terraform apply` of each named stack, in the order given (the workflow gives common, then traffic, then a colour),
from cdktf.out: what `cdktf deploy <stack>` does, after `make synth`, the result in the job summary.

    python -m scripts.ci.deploy_stacks common traffic
    python -m scripts.ci.deploy_stacks blue --named '["green"]'    # the deploy workflow: blue is frozen if it serves

Stops at the first failure: a colour reads common's and traffic's state, so nothing after a failed stack is applied.
Which stacks changed: scripts/ci/changed_stacks.py. With --named (the colours whose own entry the change edits, as
changed_stacks lists them), a colour that serves when this runs (its live weight: scripts/ci/serving.py) and is not
named is frozen: not applied, and the summary says so, with the live weights beside the config's.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from model.paths import PROJECT_DIR
from scripts.ci.serving import colours_of, live_weights
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
    parser.add_argument(
        "--named",
        type=json.loads,
        help="JSON list of the colours whose own entry the change edits: any other colour that serves is not deployed",
    )
    args = parser.parse_args(argv)
    stacks = list(args.stacks)
    if args.named is not None and (colours := colours_of(stacks)):
        weights = live_weights(args.project_dir, colours)
        frozen = [colour for colour in colours if weights.frozen(colour, named=args.named)]
        summary("\n\n".join([weights.summary(), *(weights.frozen_line(colour) for colour in frozen)]))
        stacks = [stack for stack in stacks if stack not in frozen]
    for stack in stacks:
        if not deploy(args.project_dir, stack):
            print(f"deploy_stacks: {stack} failed; nothing after it was applied", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
