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
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.config import COMMON_STACK
from model.loading import ConfigError, load_config
from model.paths import PROJECT_DIR, tools_first
from scripts.emulator import MotoProcess, client, environment, free_port
from scripts.scratch_project import link_project
from scripts.terraformrc import configure_environment

# What a user's checkout holds that the copy must not share: its config, output and state.
OWN = {"cdktf.json", "cdktf.out", "terraform-state", ".git"}
# The emulator issues certificates at once and has AWS's managed policies to attach.
EMULATOR_SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}
# Providers that cannot be installed here or planned without a cluster: a colour is planned without them.
UNAVAILABLE = ("helm", "kubernetes")


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
    region: str = "ap-northeast-1"
    runs: list[Run] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path, endpoint: str, config: dict[str, Any]) -> Project:
        link_project(root, own=OWN)
        project = cls(root, endpoint, config, str(config.get("region", "ap-northeast-1")))
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
        """The emulator's AWS settings, and the Makefile's: the pinned Node and the virtualenv first on
        PATH, Terraform's providers from the local mirror when there is one."""
        configure_environment()
        return {**environment(self.endpoint, self.region), "CI": "true", "PATH": tools_first(os.environ["PATH"])}

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

    def plan_aws_part(self, colour: str, *, stack_dir: Path | None = None, env: dict[str, str] | None = None) -> Run:
        """Plan a synthesized colour without its helm/kubernetes part against common's real state, into
        `<stack>-aws-part/plan` (beside the colour's directory: the path to common's state is relative)."""
        stack_dir = stack_dir or self.stack_dir(colour)
        aws_only, _ = aws_part(json.loads((stack_dir / "cdk.tf.json").read_text()))
        where = _aws_part_dir(stack_dir)
        where.mkdir(exist_ok=True)
        aws_only["terraform"]["backend"] = {"local": {"path": "aws-part.tfstate"}}
        (where / "cdk.tf.json").write_text(json.dumps(aws_only))
        init = self.run("terraform", "init", "-input=false", "-no-color", cwd=where)
        if init.returncode != 0:
            return init
        return self.run("terraform", "plan", "-input=false", "-no-color", "-out=plan", cwd=where, env=env)

    def planned(self, colour: str, *, stack_dir: Path | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
        """The planned values of plan_aws_part's plan, by resource address."""
        where = _aws_part_dir(stack_dir or self.stack_dir(colour))
        shown = json.loads(self.run("terraform", "show", "-json", "plan", cwd=where, env=env).output)
        return {r["address"]: r.get("values", {}) for r in shown["planned_values"]["root_module"]["resources"]}

    def aws(self, service: str) -> Any:
        return client(service, self.endpoint, self.region)

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _aws_part_dir(stack_dir: Path) -> Path:
    return stack_dir.with_name(f"{stack_dir.name}-aws-part")


def aws_part(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of a stack without the helm/kubernetes providers and their resources, and the
    addresses removed; references to them from what remains (depends_on) are dropped too."""
    doc = json.loads(json.dumps(document))
    removed = [
        f"{kind}.{name}" for kind, items in doc.get("resource", {}).items() if kind.startswith(UNAVAILABLE) for name in items
    ]
    doc["resource"] = {k: v for k, v in doc["resource"].items() if not k.startswith(UNAVAILABLE)}
    for name in UNAVAILABLE:
        doc.get("provider", {}).pop(name, None)
        doc["terraform"]["required_providers"].pop(name, None)
    for items in doc["resource"].values():
        for body in items.values():
            if "depends_on" in body:
                body["depends_on"] = [d for d in body["depends_on"] if d not in removed]
    return doc, removed


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
        for colour in load_config(project.root / "cdktf.json").clusters:
            show.step(f"plan {colour}'s AWS part against common's state", functools.partial(_colour_plan, project, colour))
        show.step("cdktf destroy common", lambda: project.run("cdktf", "destroy", COMMON_STACK, "--auto-approve"))
    finally:
        server.stop()
    seconds = time.monotonic() - show.started
    out(f"rehearsal passed in {seconds:.0f} s: common deploys, reads back without drift, serves every colour's plan, and goes")


def deploy_common(project: Project, show: Rehearsal) -> None:
    """What a user does first: the parent zone exists already; synth, init, `cdktf deploy common`."""
    parent = str(project.config.get("dns", {}).get("parent_zone", "example.com"))
    show.step(f"create the parent zone {parent}", lambda: _parent_zone(project, parent))
    show.step("cdktf synth", lambda: project.run("cdktf", "synth"))
    show.step(
        "terraform init common (offline: providers from the local mirror when there is one)", lambda: project.init(COMMON_STACK)
    )
    show.step("cdktf deploy common", lambda: project.run("cdktf", "deploy", COMMON_STACK, "--auto-approve"))


def _parent_zone(project: Project, name: str) -> str:
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


def _colour_plan(project: Project, colour: str) -> str | Run:
    plan = project.plan_aws_part(colour)
    if plan.returncode != 0:
        return plan
    planned = project.planned(colour)
    kinds = sorted({address.split(".")[0].removeprefix("aws_") for address in planned})
    return f"{len(planned)} resources ({', '.join(kinds)})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make rehearse", description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch copy (its path is printed)")
    args = parser.parse_args(argv)
    try:
        raw = load_config(PROJECT_DIR / "cdktf.json")
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
