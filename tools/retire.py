"""Destroy an old colour once it serves nothing: `python -m tools.retire blue [--force] [--auto-approve]`.

Checks, before the slow part, that the colour was deployed at all (its Terraform state holds
resources) and has no live weight (the shared load balancer's weights and rules; the configuration's weights are not
asked), then runs `cdktf destroy <colour>`. The colour is retired while
the configuration still names it; it is removed from the configuration afterwards (the traffic stack then deletes its
target groups). The stack's own
teardown hook (tools/hooks/teardown.py) checks again, removes the apps and waits until their targets
have left the target groups first, so a plain `cdktf destroy blue` is just as safe; this command
adds `--force`, for a colour that must go although it still has weight.

The hook runs the project's Python on this machine (.venv/bin/python, else `python3`): before the destroy starts,
this command checks that interpreter exists and imports what the hook needs, and refuses in one line if not. A plain
`cdktf destroy` cannot check first (no Terraform condition can run a program at plan), but fails as safely: the hook
is destroyed first, and when it cannot run, Terraform deletes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from model.config import Config
from model.loading import ConfigError, load_config
from model.paths import VENV_PYTHON, tools_first
from model.teardown_plan import FORCE_ENV, teardown_plan
from tools.aws import Aws
from tools.aws_problems import aws_errors_as
from tools.cli import exit_status, run_cdktf
from tools.hooks.teardown import UnsafeTeardownError, check_weight, live_weight
from tools.signals import handle_stops


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.retire", description=__doc__.split("\n\n")[0])
    parser.add_argument("colour", help="the colour to destroy")
    parser.add_argument(
        "--force",
        action="store_true",
        help="destroy although the colour still has weight, or its cluster cannot be reached: the teardown then skips "
        "the apps and still waits for the load balancer and records they made (docs/upgrade-runbook.md)",
    )
    parser.add_argument("--auto-approve", action="store_true", help="do not ask before destroying (cdktf's flag)")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)

    never: list[str] = []

    def check() -> None:
        config = load_config(args.config)
        if args.colour not in config.clusters:
            raise UnsafeTeardownError(
                f"{args.colour!r} is not a configured colour (configured: {', '.join(config.clusters) or 'none'}). A colour "
                "is retired while the configuration still names it, then removed from it: if its stack still holds "
                f"resources, put its entry clusters.{args.colour} back as it was deployed, retire it, then remove it "
                "(docs/ci.md, 'Retiring a colour')"
            )
        aws = Aws(config.region)
        state = deployed_state(config, args.colour, aws)
        if state is not None:
            never.append(state)
            return
        plan = teardown_plan(config, args.colour)
        if not args.force:
            check_weight(plan, live_weight(aws, plan))

    refusal = exit_status(check, refused=(ConfigError, UnsafeTeardownError), failed=())
    if refusal:
        return refusal
    if never:
        print(f"{args.colour} was never deployed ({never[0]}): nothing to destroy")
        return 0
    project = args.config.resolve().parent
    missing = hook_python_missing(project, path=tools_first(os.environ["PATH"]))
    if missing:
        print(f"refused: {missing}; nothing was destroyed", file=sys.stderr)
        return 2
    command = ["destroy", args.colour, *(["--auto-approve"] if args.auto_approve else [])]
    try:
        status = run_cdktf(command, cwd=project, env={FORCE_ENV: "1" if args.force else "0"})
    except KeyboardInterrupt as stop:
        print(
            f"interrupted ({stop or 'SIGINT'}): the destroy of {args.colour} stopped where Terraform could stop it, its "
            f"state written; run python -m tools.retire {args.colour} again to resume",
            file=sys.stderr,
        )
        return 130
    if status == 0:
        print(
            f"{args.colour} is destroyed; now remove clusters.{args.colour} from the config and deploy traffic (a merge does: "
            f"its target groups, rules and preview hosts go)"
        )
    return status


# What the destroy hook imports when it runs (tools.teardown, its model and boto3, which tools/aws.py loads late).
HOOK_IMPORTS = ("boto3", "tools.teardown", "tools.aws", "tools.kube")


def hook_python_missing(project: Path, *, path: str) -> str | None:
    """None when the interpreter the destroy hook will run in project (as components/destroy_hook.py picks it: the
    project's .venv/bin/python, else `python3` on path) imports what the hook needs; else what is missing and how to
    get it."""
    venv = project / VENV_PYTHON
    python = str(venv) if os.access(venv, os.X_OK) else shutil.which("python3", path=path)
    get_it = f"run `make synth` in {project} (it installs the project's {VENV_PYTHON}) and retire again"
    if python is None:
        return f"the destroy hook runs {venv} (or python3 from PATH), and there is neither: {get_it}"
    probe = f"import {', '.join(HOOK_IMPORTS)}"
    done = subprocess.run(
        [python, "-c", probe], cwd=project, env={**os.environ, "PATH": path}, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return f"the destroy hook runs {python}, which cannot import what it needs ({said}): {get_it}"
    return None


def deployed_state(config: Config, colour: str, aws: Aws) -> str | None:
    """None when the colour's Terraform state holds resources; else why it does not (for the message)."""
    state = config.state
    if state.backend == "local":
        path = state.file(colour)
        where = str(path)
        if not path.exists():
            return f"no state file {path}"
        try:
            text = path.read_bytes()
        except OSError as err:
            raise _unreadable(colour, where, err.strerror or str(err)) from None
    else:
        key = state.key(colour)
        where = f"s3://{state.bucket}/{key}"
        s3 = aws.client("s3") if state.region == config.region else Aws(state.region).s3
        with aws_errors_as(lambda said: _unreadable(colour, where, said)):
            try:
                text = s3.get_object(Bucket=state.bucket, Key=key)["Body"].read()
            except s3.exceptions.NoSuchKey:
                return f"no state {where}"
    try:
        held = json.loads(text.decode() or "{}")
    except UnicodeDecodeError as err:
        raise _unreadable(colour, where, f"not Terraform state: byte {text[err.start]:#04x} at {err.start} is no UTF-8") from None
    except ValueError as err:
        raise _unreadable(colour, where, f"not Terraform state: {err}") from None
    if not isinstance(held, dict) or not held.get("resources"):
        return "its state holds no resources"
    return None


def _unreadable(colour: str, where: str, why: str) -> UnsafeTeardownError:
    return UnsafeTeardownError(
        f"cannot read {colour}'s Terraform state {where} ({why}): whether it is deployed is unknown, so nothing was "
        "destroyed. Check the `state` settings of the config and access to the state"
    )


if __name__ == "__main__":
    handle_stops()  # a cancelled run's SIGTERM stops the destroy as Ctrl-C does (tools/cli.py run_cdktf)
    sys.exit(main())
