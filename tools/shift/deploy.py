"""The shift's deploy step: the pinned cdktf CLI, as a user would run it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from tools.cli import run_cdktf
from tools.shift import ShiftError

Deploy = Callable[[Sequence[str]], None]  # deploys the given colours, in that order, or raises ShiftError


def cdktf_deploy(colours: Sequence[str], *, cwd: Path) -> None:
    """The real deploy: the pinned cdktf CLI, as a user would run it, one stack at a time, in the order
    given. (Given several stacks the CLI deploys them at once, and Terraform's plugin cache is not safe
    under concurrent `terraform init`: hashicorp/terraform issue 31964.)"""
    for done, colour in enumerate(colours):
        arguments = ["deploy", colour, "--auto-approve"]
        status = run_cdktf(arguments, cwd=cwd)
        if status != 0:
            deployed = f"; {', '.join(colours[:done])} deployed before it" if done else ""
            raise ShiftError(f"`cdktf {' '.join(arguments)}` exited {status}{deployed}")
