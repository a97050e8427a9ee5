"""README's commands run by hand: `source scripts/env.sh && <command>` from a new user's shell, in a scratch copy of
the project whose cdktf.json names config.json as the shipped project file does (tests/test_cli.py; its `cdktf synth`
and its `cdktf diff common` run from the session's start as a background check, tests/support/background_checks.py)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.emulator import aws_settings, client
from scripts.scratch_project import link_project, write_project_file
from tests.support.configs import example_raw
from tests.support.new_shell import a_new_users_environment

LEFTOVER = "yesterday"  # a stack an earlier synth wrote, which the next synth removes


@dataclass
class ByHand:
    returncode: int
    output: str
    stacks: list[str]  # what cdktf.out/stacks holds afterwards


def scratch_project(directory: Path, config_text: str) -> Path:
    """directory/project: a scratch copy with config_text as its config.json, over the stacks of an earlier synth."""
    project = directory / "project"
    link_project(project, own={"cdktf.json", "config.json", "cdktf.out", "terraform-state", ".git"})
    # The project's CLI settings (app command, language), naming config.json as the shipped project file does.
    cdktf = json.loads(write_project_file(project, {}).read_text())
    (project / "cdktf.json").write_text(json.dumps({**cdktf, "context": {"config": "config.json"}}, indent=2))
    (project / "config.json").write_text(config_text)
    (project / "cdktf.out" / "stacks" / LEFTOVER).mkdir(parents=True)
    (project / "cdktf.out" / "stacks" / LEFTOVER / "cdk.tf.json").write_text("{}")
    return project


def by_hand(project: Path, command: str, aws: dict[str, str] | None = None) -> ByHand:
    """`source scripts/env.sh && <command>` in the project, from a new user's shell (aws: its AWS_* settings, none
    by default); output to a pipe, as in CI."""
    env = a_new_users_environment(without_prefixes=("AWS_",))
    done = subprocess.run(
        ["bash", "-c", f"source scripts/env.sh && {command}"],
        cwd=project,
        env={**env, **(aws or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    stacks_dir = project / "cdktf.out" / "stacks"
    stacks = sorted(p.name for p in stacks_dir.iterdir()) if stacks_dir.exists() else []
    return ByHand(done.returncode, done.stdout + done.stderr, stacks)


def config_text(raw: Mapping[str, Any]) -> str:
    """A configuration file as a team writes it: the schema named, indented."""
    return json.dumps({"$schema": "./config.schema.json", **raw}, indent=2) + "\n"


def example_config_text() -> str:
    return config_text(example_raw())


# The by-hand synth's project plans against the emulator, in a parent zone of its own (tests/test_cli.py).
DIFF_ZONE = "by-hand.example.net"


@dataclass
class CliByHand:
    """README's `cdktf synth` by hand in a scratch copy holding the shipped example (in a parent zone of its own), then
    `node --version` there, then `cdktf diff common` of what the synth wrote, against the emulator."""

    project: Path
    synth: ByHand
    node: ByHand
    diff: ByHand


def cli_by_hand(directory: Path, endpoint: Callable[[], str]) -> CliByHand:
    """endpoint: the emulator's, once it is up (the synth needs none). In the example's region (the project's `region`
    key, which the stack's provider is configured with)."""
    example = example_raw()
    region = example["region"]
    config = {**example, "dns": {**example["dns"], "parent_zone": DIFF_ZONE}}
    project = scratch_project(directory, config_text(config))
    synth = by_hand(project, "cdktf synth")
    node = by_hand(project, "node --version")
    url = endpoint()
    client("route53", url, region).create_hosted_zone(Name=DIFF_ZONE, CallerReference=f"{DIFF_ZONE}-{directory.name}")
    # `cdktf diff` alone synthesizes first, the same CLI step as the `cdktf synth` just run: diffing what that wrote
    # runs the rest (init from the mirror, no provider lock, the plan) without a second jsii runtime's synth.
    diff = by_hand(project, "cdktf diff common --skip-synth", aws_settings(url, region))
    return CliByHand(project, synth, node, diff)
