"""Terraform really runs a colour's destroy hook: the synthesized `terraform_data` alone, against an AWS emulator
process (a zone and a project of its own, the colour's live weight in its weights parameter), destroyed twice:
refused while the colour has weight, done once it has none. A background check (tests/support/background_checks.py):
it runs on a thread, so everything it needs is passed in, nothing is read from the test process's environment."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.routes import weights_parameter
from model.teardown_plan import FORCE_ENV
from scripts.emulator import aws_settings, client
from tests.support.terraform import run

ZONE = "hook-test.example.org"
PROJECT = "hook-test"  # the live weights of its own: /hook-test/traffic/weights
REGION = "ap-northeast-1"


@dataclass(frozen=True)
class HookRun:
    colour: str
    refused: tuple[int, str]  # the first destroy, while the colour has weight: (exit status, output)
    state_after_refusal: list[str]
    destroyed: tuple[int, str]  # the second, once its weight is 0
    state_after_destroy: list[str]


def hook_directory(hook: dict[str, Any], directory: Path) -> Path:
    """The synthesized hook alone, as Terraform runs it in cdktf.out/stacks/<colour>; no cluster exists there."""
    body = json.loads(json.dumps(hook))
    body.pop("depends_on")
    # The colour as last deployed by the shift: weight 0 in its config.
    colour = body["input"]["colour"]
    body["input"].update(zone_name=ZONE, project=PROJECT, cluster=f"{PROJECT}-{colour}", timeout_seconds=60, weight=0)
    directory.mkdir(parents=True)
    (directory / "main.tf.json").write_text(json.dumps({"resource": {"terraform_data": {"hook": body}}}))
    return directory


def run_hook(directory: Path, endpoint: str) -> HookRun:
    colour = json.loads((directory / "main.tf.json").read_text())["resource"]["terraform_data"]["hook"]["input"]["colour"]
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != FORCE_ENV}
    env = {**inherited, **aws_settings(endpoint, REGION)}
    route53, ssm = client("route53", endpoint, REGION), client("ssm", endpoint, REGION)
    zone = route53.create_hosted_zone(Name=ZONE, CallerReference=directory.name + "-hook")["HostedZone"]["Id"]
    weights = weights_parameter(PROJECT)
    ssm.put_parameter(Name=weights, Value=json.dumps({colour: 10, "other": 90}), Type="String", Overwrite=True)
    try:
        for step in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
            done = run(directory, *step, env=env)
            assert done.returncode == 0, done.stdout + done.stderr
        refused = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        after_refusal = run(directory, "state", "list", env=env).stdout.split()
        ssm.put_parameter(Name=weights, Value=json.dumps({colour: 0, "other": 100}), Type="String", Overwrite=True)
        destroyed = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        after_destroy = run(directory, "state", "list", env=env).stdout.split()
    finally:
        route53.delete_hosted_zone(Id=zone)
        ssm.delete_parameter(Name=weights)
    return HookRun(
        colour=colour,
        refused=(refused.returncode, refused.stdout + refused.stderr),
        state_after_refusal=after_refusal,
        destroyed=(destroyed.returncode, destroyed.stdout + destroyed.stderr),
        state_after_destroy=after_destroy,
    )
