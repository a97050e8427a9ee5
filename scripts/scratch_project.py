"""Scratch copies of the project: its files linked, with files of their own where they differ (its cdktf.json,
output and state), pointed at an AWS emulator; and a colour's stack without the part no emulator can plan.

Used by `make rehearse` (scripts/rehearse.py), `make bench` and the tests that run the CLI.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.config import Config
from model.loading import config_from_dict
from model.paths import PROJECT_DIR, tools_first
from scripts.ci.stacks import aws_part
from scripts.emulator import CREDENTIALS, client, environment
from scripts.terraformrc import configure_environment, forget_provider_checksums

# What a user's checkout holds that the copy must not share: its config, output and state.
OWN = {"cdktf.json", "cdktf.out", "terraform-state", ".git"}


def link_project(directory: Path, *, own: Collection[str]) -> None:
    """Create directory with a link to each of the project's top-level entries but those named in
    own (the caller writes those: its cdktf.json, its output, its state)."""
    directory.mkdir(parents=True)
    for entry in PROJECT_DIR.iterdir():
        if entry.name not in own:
            (directory / entry.name).symlink_to(entry)


def write_project_file(directory: Path, config: Mapping[str, Any]) -> Path:
    """directory/cdktf.json: the project's CLI settings (app command, language), with config as `context.config`."""
    cdktf = {k: v for k, v in json.loads((PROJECT_DIR / "cdktf.json").read_text()).items() if k != "context"}
    cdktf["context"] = {"config": dict(config)}
    path = directory / "cdktf.json"
    path.write_text(json.dumps(cdktf, indent=2))
    return path


@dataclass
class Run:
    command: str
    returncode: int
    output: str
    seconds: float


@dataclass
class Project:
    """The project's files (linked), its own cdktf.json, state and output, pointed at an emulator.
    credentials: who its commands and clients are on the emulator (an admin of an emulator that enforces IAM)."""

    root: Path
    endpoint: str
    config: dict[str, Any]
    region: str
    runs: list[Run] = field(default_factory=list)
    credentials: Mapping[str, str] = field(default_factory=lambda: dict(CREDENTIALS))

    @classmethod
    def create(cls, root: Path, endpoint: str, config: dict[str, Any], credentials: Mapping[str, str] = CREDENTIALS) -> Project:
        link_project(root, own=OWN)
        project = cls(root, endpoint, config, config_from_dict(config).region, credentials=dict(credentials))
        project.write_config(config)
        return project

    def write_config(self, config: dict[str, Any]) -> None:
        self.config = config
        write_project_file(self.root, {**config, "state": {"directory": str(self.state_dir)}})

    @property
    def settings(self) -> Config:
        """Its configuration, validated."""
        return config_from_dict(self.config)

    @property
    def state_dir(self) -> Path:
        return self.root / "terraform-state"

    def stack_dir(self, stack: str) -> Path:
        return self.root / "cdktf.out" / "stacks" / stack

    @property
    def env(self) -> dict[str, str]:
        """The emulator's AWS settings, and the Makefile's: the pinned Node and the virtualenv first on
        PATH, Terraform's providers from the local mirror when there is one."""
        configure_environment()
        return {
            **environment(self.endpoint, self.region, self.credentials),
            "CI": "true",
            "PATH": tools_first(os.environ["PATH"]),
        }

    def run(
        self,
        *command: str,
        cwd: Path | None = None,
        timeout: int = 900,
        env: dict[str, str] | None = None,
        nice: int = 0,
    ) -> Run:
        """env: variables set for this run on top of the project's (other credentials, say); nice: the command's
        niceness above this process's (what others wait on goes first when they want a CPU at once)."""
        start = time.monotonic()
        done = subprocess.run(
            command,
            cwd=cwd or self.root,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            preexec_fn=functools.partial(os.nice, nice) if nice else None,
        )
        run = Run(" ".join(command), done.returncode, done.stdout + done.stderr, time.monotonic() - start)
        self.runs.append(run)
        if command[:2] == ("terraform", "init") and done.returncode == 0:
            forget_provider_checksums(cwd or self.root)
        return run

    def init(self, stack: str) -> Run:
        """`terraform init` before the CLI's first deploy: offline, the CLI would otherwise run
        `terraform providers lock` against the registry."""
        return self.run("terraform", "init", "-input=false", "-no-color", cwd=self.stack_dir(stack))

    def plan_aws_parts(self, stacks: Mapping[str, Path], env: dict[str, str] | None = None) -> tuple[Run, dict[str, Any]]:
        """Plan synthesized colours without their helm/kubernetes part against common's and traffic's real state, in
        one Terraform run: each stack a module of one root, `aws-parts` beside the first stack's directory (the paths
        to the states are relative to the working directory: the same from there for stacks at the same depth). The
        aws provider's schema is loaded, and the plan shown, once instead of once per stack.
        stacks: a name -> a stack's directory; env: variables for the run on top of the project's (other credentials).
        Returns the plan's run and each stack's planned values by resource address (none if the plan failed)."""
        where = next(iter(stacks.values())).with_name("aws-parts")
        where.mkdir(exist_ok=True)
        for name, stack_dir in stacks.items():
            aws_only, _ = aws_part(json.loads((stack_dir / "cdk.tf.json").read_text()))
            del aws_only["terraform"]["backend"]  # a module has none
            (where / name).mkdir(exist_ok=True)
            (where / name / "cdk.tf.json").write_text(json.dumps(aws_only))
        root = {
            "terraform": {"backend": {"local": {"path": "aws-parts.tfstate"}}},
            "module": {name: {"source": f"./{name}"} for name in stacks},
        }
        (where / "main.tf.json").write_text(json.dumps(root))
        init = self.run("terraform", "init", "-input=false", "-no-color", cwd=where)
        if init.returncode != 0:
            return init, {}
        plan = self.run("terraform", "plan", "-input=false", "-no-color", "-out=plan", cwd=where, env=env)
        if plan.returncode != 0:
            return plan, {}
        shown = json.loads(self.run("terraform", "show", "-json", "plan", cwd=where).output)
        planned: dict[str, Any] = {name: {} for name in stacks}
        for module in shown["planned_values"]["root_module"].get("child_modules", []):
            name = module["address"].removeprefix("module.")
            planned[name] = {r["address"].removeprefix(f"{module['address']}."): r.get("values", {}) for r in module["resources"]}
        return plan, planned

    def aws(self, service: str) -> Any:
        return client(service, self.endpoint, self.region, self.credentials)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
