"""The shift's deploys: synthesize the config the shift just wrote, plan one colour, apply exactly that plan.

A step applies a saved plan, never a fresh `cdktf deploy`: what Terraform applies is the plan the shift
judged (tools/shift/pending.py), so nothing pending beside the weights can slip in between the two.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from model.paths import tools_first
from tools.cli import run_cdktf
from tools.shift import ShiftError

PLAN_FILE = "shift.tfplan"  # in the colour's stack directory; each plan of that colour overwrites it


@dataclass(frozen=True, eq=False)
class Plan:
    """One colour's saved plan: what `terraform show -json` says it does, and the file `apply` takes."""

    colour: str
    document: Mapping[str, Any]
    file: Path | None = None  # None for plans that are not Terraform's (the tests' fakes)


class Deployer(Protocol):
    def synth(self) -> None:
        """Write every stack from the config as it is now (the shift has just written its weights)."""

    def plan(self, colour: str) -> Plan:
        """Plan the colour's stack as last synthesized; raises ShiftError when it cannot."""

    def apply(self, plan: Plan) -> None:
        """Apply exactly this plan; raises ShiftError when it fails."""


@dataclass
class CdktfDeployer:
    """The real one: the pinned cdktf CLI synthesizes, Terraform plans and applies in cdktf.out/stacks/<colour>,
    as `cdktf deploy` would, with the same environment (the pinned Node and the virtualenv first on PATH).
    One stack at a time: Terraform's plugin cache is not safe under concurrent `terraform init`
    (hashicorp/terraform issue 31964)."""

    project: Path  # the directory of cdktf.json
    initialised: set[str] = field(default_factory=set)  # colours whose stack this run has `terraform init`ed
    # How the CLIs run (the tests record them instead).
    cdktf: Callable[..., int] = run_cdktf
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run

    def synth(self) -> None:
        status = self.cdktf(["synth"], cwd=self.project)
        if status != 0:
            raise ShiftError(f"`cdktf synth` exited {status}")

    def plan(self, colour: str) -> Plan:
        stack = self._stack(colour)
        if not stack.is_dir():
            raise ShiftError(f"`cdktf synth` wrote no stack {colour} ({stack} is missing)")
        if colour not in self.initialised:
            self._terraform(stack, "init", "-input=false", "-no-color")
            self.initialised.add(colour)
        file = stack / PLAN_FILE
        file.unlink(missing_ok=True)
        self._terraform(stack, "plan", "-input=false", "-no-color", f"-out={PLAN_FILE}")
        shown = self._terraform(stack, "show", "-json", PLAN_FILE)
        try:
            document = json.loads(shown)
        except json.JSONDecodeError as err:
            raise ShiftError(f"`terraform show -json {PLAN_FILE}` in {stack} printed no plan: {err}") from None
        return Plan(colour, document, file)

    def apply(self, plan: Plan) -> None:
        if plan.file is None:
            raise ShiftError(f"{plan.colour}'s plan has no saved plan file to apply")
        # Terraform's own progress goes to the terminal, as with `cdktf deploy`.
        self._terraform(plan.file.parent, "apply", "-input=false", plan.file.name, capture=False)
        plan.file.unlink(missing_ok=True)

    def _stack(self, colour: str) -> Path:
        """Where `cdktf synth` wrote the colour's stack (cdktf.json's `output`, cdktf.out by default)."""
        settings = json.loads((self.project / "cdktf.json").read_text())
        return self.project / str(settings.get("output") or "cdktf.out") / "stacks" / colour

    def _terraform(self, stack: Path, *arguments: str, capture: bool = True) -> str:
        """stdout of `terraform <arguments>` in the stack's directory; raises ShiftError with its last lines on failure.
        TERRAFORM_BINARY_NAME names another binary, as it does for the cdktf CLI."""
        command = [os.environ.get("TERRAFORM_BINARY_NAME", "terraform"), *arguments]
        env = {**os.environ, "PATH": tools_first(os.environ["PATH"])}
        try:
            done = self.run(command, cwd=stack, env=env, capture_output=capture, text=True, check=False)
        except FileNotFoundError as err:
            raise ShiftError(f"`{' '.join(command)}` could not run in {stack}: {err}") from None
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout or "").strip().splitlines()[-20:]) if capture else ""
            said = f":\n{tail}" if tail else ""
            raise ShiftError(f"`terraform {' '.join(arguments)}` in {stack} exited {done.returncode}{said}")
        return done.stdout or ""
