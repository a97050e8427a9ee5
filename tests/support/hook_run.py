"""Terraform really runs a colour's destroy hook: the synthesized `terraform_data` alone, against an AWS
emulator process (a zone of its own, a weighted record of the colour's), destroyed twice: refused while the
colour has weight, done once it has none. A background check (tests/support/background_checks.py): it runs on
a thread, so everything it needs is passed in, nothing is read from the test process's environment."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.teardown_plan import FORCE_ENV
from scripts.emulator import aws_settings, client
from tests.support.terraform import run

ZONE = "hook-test.example.org"
REGION = "ap-northeast-1"


@dataclass(frozen=True)
class HookRun:
    colour: str
    refused: tuple[int, str]  # the first destroy, while the colour has weight: (exit status, output)
    state_after_refusal: list[str]
    destroyed: tuple[int, str]  # the second, once the record is gone
    state_after_destroy: list[str]


def hook_directory(hook: dict[str, Any], directory: Path) -> Path:
    """The synthesized hook alone, as Terraform runs it in cdktf.out/stacks/<colour>; no cluster exists there."""
    body = json.loads(json.dumps(hook))
    body.pop("depends_on")
    # The colour as last deployed by the shift: weight 0 in its config.
    colour = body["input"]["colour"]
    body["input"].update(zone_name=ZONE, hostname=f"app.{ZONE}", cluster=f"hook-test-{colour}", timeout_seconds=60, weight=0)
    directory.mkdir(parents=True)
    (directory / "main.tf.json").write_text(json.dumps({"resource": {"terraform_data": {"hook": body}}}))
    return directory


def run_hook(directory: Path, endpoint: str) -> HookRun:
    colour = json.loads((directory / "main.tf.json").read_text())["resource"]["terraform_data"]["hook"]["input"]["colour"]
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != FORCE_ENV}
    env = {**inherited, **aws_settings(endpoint, REGION)}
    route53 = client("route53", endpoint, REGION)
    zone = route53.create_hosted_zone(Name=ZONE, CallerReference=directory.name + "-hook")["HostedZone"]["Id"]
    record: dict[str, Any] = {
        "Name": f"app.{ZONE}",
        "Type": "A",
        "SetIdentifier": colour,
        "Weight": 10,
        "TTL": 60,
        "ResourceRecords": [{"Value": "192.0.2.10"}],
    }
    route53.change_resource_record_sets(
        HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": record}]}
    )
    try:
        for step in (("init", "-input=false", "-no-color"), ("apply", "-auto-approve", "-input=false", "-no-color")):
            done = run(directory, *step, env=env)
            assert done.returncode == 0, done.stdout + done.stderr
        refused = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        after_refusal = run(directory, "state", "list", env=env).stdout.split()
        route53.change_resource_record_sets(
            HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "DELETE", "ResourceRecordSet": record}]}
        )
        destroyed = run(directory, "destroy", "-auto-approve", "-input=false", "-no-color", env=env)
        after_destroy = run(directory, "state", "list", env=env).stdout.split()
    finally:
        route53.delete_hosted_zone(Id=zone)
    return HookRun(
        colour=colour,
        refused=(refused.returncode, refused.stdout + refused.stderr),
        state_after_refusal=after_refusal,
        destroyed=(destroyed.returncode, destroyed.stdout + destroyed.stderr),
        state_after_destroy=after_destroy,
    )
