"""A throwaway copy of the project that runs the user's own commands against an AWS emulator."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.paths import PROJECT_DIR
from scripts.scratch_project import link_project
from tests.support.moto_server import environment

# What a user's checkout holds that the copy must not share: its config, output and state.
OWN = {"cdktf.json", "cdktf.out", "terraform-state", ".git"}


@dataclass
class Run:
    command: str
    returncode: int
    output: str
    seconds: float


@dataclass
class Project:
    """The project's files (linked), its own cdktf.json, state and output, pointed at an emulator."""

    root: Path
    endpoint: str
    config: dict[str, Any]
    runs: list[Run] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path, endpoint: str, config: dict[str, Any]) -> Project:
        link_project(root, own=OWN)
        project = cls(root, endpoint, config)
        project.write_config(config)
        return project

    def write_config(self, config: dict[str, Any]) -> None:
        self.config = config
        cdktf = json.loads((PROJECT_DIR / "cdktf.json").read_text())
        cdktf["context"]["config"] = {**config, "state": {"directory": str(self.state_dir)}}
        (self.root / "cdktf.json").write_text(json.dumps(cdktf, indent=2))

    @property
    def state_dir(self) -> Path:
        return self.root / "terraform-state"

    def stack_dir(self, stack: str) -> Path:
        return self.root / "cdktf.out" / "stacks" / stack

    @property
    def env(self) -> dict[str, str]:
        return {**environment(self.endpoint, "ap-northeast-1"), "CI": "true"}

    def run(self, *command: str, cwd: Path | None = None, timeout: int = 900, env: dict[str, str] | None = None) -> Run:
        """env: variables set for this run on top of the project's (other credentials, say)."""
        start = time.monotonic()
        done = subprocess.run(
            command,
            cwd=cwd or self.root,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        run = Run(" ".join(command), done.returncode, done.stdout + done.stderr, time.monotonic() - start)
        self.runs.append(run)
        return run

    def init(self, stack: str) -> Run:
        """`terraform init` before the CLI's first deploy: offline, the CLI would otherwise run
        `terraform providers lock` against the registry."""
        return self.run("terraform", "init", "-input=false", "-no-color", cwd=self.stack_dir(stack))

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
