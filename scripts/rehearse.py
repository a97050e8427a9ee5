"""`make rehearse`: the first deploy, rehearsed against an AWS emulator in a scratch copy of the project.

    make rehearse        # or: python -m scripts.rehearse [--keep]

One line per step with its time; exit 1 at the first failing step, with the end of its output.
The copy has its own cdktf.json, cdktf.out and state: the project's terraform-state/ and cdktf.out/
are never touched, and nothing can reach a real account (every AWS_* variable points at the
emulator). Steps: start the emulator (moto, certificates issued at once) on a free loopback port;
create the parent zone; `cdktf synth`; `cdktf deploy common`; read back what it made; `terraform
plan` with no drift; plan each colour's AWS part against common's state; `cdktf destroy common`.

A colour cannot be applied to the emulator (it has no EKS add-ons, access entries or Pod Identity),
so each colour's AWS part (cluster, nodes, add-ons, access, Pod Identity associations) is planned
against common's real state instead, without its helm/kubernetes part (those providers need a
cluster to talk to).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from model.config import COMMON_STACK
from model.loading import ConfigError, load_config
from model.paths import PROJECT_DIR
from scripts.emulator import MotoProcess, free_port
from scripts.scratch_project import Project, Run

# The emulator issues certificates at once and has AWS's managed policies to attach.
EMULATOR_SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}


class StepFailedError(Exception):
    def __init__(self, step: str, output: str) -> None:
        super().__init__(step)
        self.step, self.output = step, output


class Rehearsal:
    """Runs the steps in order, one line each: `[  12.3 s] ok    what it did`."""

    def __init__(self, out: Callable[[str], None] = print) -> None:
        self.say = out
        self.started = time.monotonic()

    def step(self, name: str, action: Callable[[], str | Run]) -> None:
        """action: returns what to print after the name, or a Run that must have exited 0."""
        start = time.monotonic()
        result = action()
        seconds = time.monotonic() - start
        if isinstance(result, Run):
            if result.returncode != 0:
                self.say(f"  [{seconds:6.1f} s] FAIL  {name}: `{result.command}` exited {result.returncode}")
                raise StepFailedError(name, result.output)
            result = ""
        self.say(f"  [{seconds:6.1f} s] ok    {name}{': ' + result if result else ''}")


def rehearse(config: dict[str, Any], scratch: Path, out: Callable[[str], None] = print) -> None:
    """Every step against a fresh emulator in scratch; raises StepFailedError at the first failure."""
    show = Rehearsal(out)
    server = MotoProcess(free_port(), EMULATOR_SETTINGS)
    try:
        show.step("start the AWS emulator", lambda: f"moto on {server.ready()}, certificates issued at once")
        project = Project.create(scratch / "project", server.endpoint, config)
        deploy_common(project, show)
        show.step("read back what common made", lambda: _read_back(project))
        show.step("terraform plan common: no drift", lambda: _no_drift(project))
        colours = list(project.settings.clusters)
        show.step(
            f"plan each colour's AWS part against common's state ({', '.join(colours)}, side by side)",
            lambda: _colour_plans(project, colours),
        )
        show.step(
            "cdktf destroy common (of that synth: --skip-synth)",
            lambda: project.run("cdktf", "destroy", COMMON_STACK, "--skip-synth", "--auto-approve"),
        )
    finally:
        server.stop()
    seconds = time.monotonic() - show.started
    out(f"rehearsal passed in {seconds:.0f} s: common deploys, reads back without drift, serves every colour's plan, and goes")


def deploy_common(project: Project, show: Rehearsal) -> None:
    """What a user does first: the parent zone exists already; synth, init, `cdktf deploy common`."""
    parent = project.settings.dns.parent_zone
    show.step(f"create the parent zone {parent}", lambda: create_parent_zone(project, parent))
    show.step("cdktf synth", lambda: project.run("cdktf", "synth"))
    show.step(
        "terraform init common (offline: providers from the local mirror when there is one)", lambda: project.init(COMMON_STACK)
    )
    # The CLI's own flag: deploy what that synth wrote (a plain `cdktf deploy common` would synthesize it again).
    show.step(
        "cdktf deploy common (of that synth: --skip-synth)",
        lambda: project.run("cdktf", "deploy", COMMON_STACK, "--skip-synth", "--auto-approve"),
    )


def create_parent_zone(project: Project, name: str) -> str:
    project.aws("route53").create_hosted_zone(Name=name, CallerReference="rehearsal-parent")
    return "the zone you already have in your account"


def _read_back(project: Project) -> str:
    outputs = json.loads(project.run("terraform", "output", "-json", cwd=project.stack_dir(COMMON_STACK)).output)
    value = {name: output["value"] for name, output in outputs.items()}
    certificate = project.aws("acm").describe_certificate(CertificateArn=value["certificate_arn"])["Certificate"]
    table = project.aws("dynamodb").describe_table(TableName=value["table_name"])["Table"]
    if certificate["Status"] != "ISSUED" or table["TableStatus"] != "ACTIVE":
        raise StepFailedError("read back", f"certificate {certificate['Status']}, table {table['TableStatus']}")
    return (
        f"VPC {value['vpc_id']} with {len(value['private_subnet_ids'])} private subnets, zone {value['zone_name']}, "
        f"certificate ISSUED, table {value['table_name']} ACTIVE, {len(outputs)} outputs"
    )


def _no_drift(project: Project) -> Run:
    return project.run(
        "terraform", "plan", "-detailed-exitcode", "-input=false", "-no-color", cwd=project.stack_dir(COMMON_STACK)
    )


def _colour_plans(project: Project, colours: list[str]) -> str | Run:
    stack_dirs = [project.stack_dir(colour) for colour in colours]
    plans = project.plan_aws_parts({stack_dir: {} for stack_dir in stack_dirs})
    failed = next((plan for plan in plans if plan.returncode != 0), None)
    if failed:
        return failed
    found = {colour: project.planned(stack_dir) for colour, stack_dir in zip(colours, stack_dirs, strict=True)}
    kinds = sorted({address.split(".")[0].removeprefix("aws_") for planned in found.values() for address in planned})
    counts = ", ".join(f"{colour} {len(planned)}" for colour, planned in found.items())
    return f"resources: {counts} ({', '.join(kinds)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make rehearse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    parser.add_argument("--config", type=Path, default=PROJECT_DIR / "cdktf.json", help="the project file to rehearse")
    args = parser.parse_args(argv)
    try:
        raw = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    # The project's configuration, as data: protection off, or the rehearsal's destroy could not finish.
    config = {**raw.model_dump(mode="json", exclude={"state"}), "deletion_protection": False}
    config["table"] = {**config["table"], "deletion_protection": False}
    scratch = Path(tempfile.mkdtemp(prefix="rehearsal-", dir=PROJECT_DIR / ".cache"))
    print(f"rehearsal in {scratch} (deletion protection off there; your cdktf.out/ and terraform-state/ are not touched)")
    try:
        rehearse(config, scratch)
    except StepFailedError as failed:
        print(f"rehearsal FAILED at: {failed.step}; the end of its output:\n{failed.output[-4000:]}", file=sys.stderr)
        print(f"the scratch copy stays for a look: {scratch}", file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
