"""Two upgrade cycles in a row on the AWS emulator, as a platform team runs them from CI (docs/ci.md), every step the
workflows' own command in a process of its own with GitHub's variables set (tests/support/emulated_cycle.py
`EmulatedWorld`), and the faults a team meets on the way. tests/test_upgrade_cycle.py asserts on what this records.

Cycle 1, blue serving: green added and deployed (the deploy workflow's steps: changed_stacks, deploy_stacks), proven
(`python -m tools.readiness green`), shifted to in metric-gated steps (`python -m tools.shift`), drained back to blue
and forward again (`--now`), blue retired (`python -m tools.retire blue`, as retire.yml) and removed from the
configuration (the deploy of traffic). Cycle 2, green serving: blue-2 added, deployed, proven and shifted to; green's
cluster lost out of band and green retired with `--force`, then removed.

Faults on the way, injected from outside the code under test:
- the config's weights left stale after the shift (no shift writes config.json): a change that would replace the node
  group of green, which serves, is refused at plan by the deploy, though the config still says blue 100;
- credentials that expire before the shift could finish (AWS_CREDENTIAL_EXPIRATION, as the workflow hands it over):
  refused up front;
- SIGTERM (a cancelled run) in the middle of a step: the step rolled back, the lock released, parameter and rules agree;
- a removal of blue from the configuration while its cluster still runs: refused by the plan of traffic;
- a drain between blue's retirement and the traffic deploy that removes it: blue is never written back;
- a change that would replace green's target group while it serves: refused by the plan of traffic;
- `retire --force` with green's cluster gone: the teardown deregisters green's pods itself and finishes.

Time runs faster for the shifts (tests/support/field: every sleep takes FIELD_CLOCK_SCALE of its time, the clock moves
on by the rest), so their five-minute windows pass in seconds; the metrics a window reads are put into the emulator's
CloudWatch beforehand (healthy traffic, as the target's load balancer would publish it).

After every step `routes` records each public host's problems: a rule forwarding to a colour the configuration does
not have, or giving weight to one whose cluster is gone or whose target group has no healthy target.
"""

from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from model.config import applications, cluster_name
from model.paths import PROJECT_DIR
from scripts.rehearse import live_weights
from scripts.scratch_project import Run, write_project_file
from tests.support.emulated_colour import hold_colours
from tests.support.emulated_cycle import EmulatedWorld, Step
from tools.clock import SystemClock
from tools.live_routes import read_routes
from tools.shift.metrics import dimension
from tools.traffic_lock import TrafficLock

FIELD_DIR = PROJECT_DIR / "tests" / "support" / "field"
FIELD_CLOCK_SCALE = 0.02  # a 300 s window in 6 s
STEP = "50"  # two steps a shift: blue 50 / green 50, then green 100
CONFIGS = ("cycle-1", "green-nodes", "blue-nodes", "without-blue", "with-blue-2", "without-green")


def configurations(head: dict[str, Any], commit: str) -> dict[str, dict[str, Any]]:
    """The configuration of each stage, from the shipped example (`head`): every colour at `commit` (a revision Git has,
    that never moves: the shift gives weight only to such a colour), blue serving."""
    clusters = head["clusters"]
    blue = {**clusters["blue"], "gitops_revision": commit, "weight": 100}
    green = {**clusters["green"], "gitops_revision": commit, "weight": 0}
    cycle = {**head, "clusters": {"blue": blue, "green": green}}
    # What a team edits after the shift without touching the weights (which no shift writes): green's nodes.
    nodes = {**green, "nodes": {**green.get("nodes", {}), "instance_types": ["m7i.xlarge"]}}
    # The next year's colour, beside green, which took the traffic (its config weight, set by the team at last): green's
    # release for the test's purpose (the platform of the next Kubernetes version is data of its own: upgrade-runbook).
    blue_2 = {**green, "weight": 0}
    serving_green = {**green, "weight": 100}
    blue_nodes = {**blue, "nodes": {**blue.get("nodes", {}), "instance_types": ["m7i.xlarge"]}}
    return {
        "cycle-1": cycle,
        "green-nodes": {**cycle, "clusters": {"blue": blue, "green": nodes}},
        "blue-nodes": {**cycle, "clusters": {"blue": blue_nodes, "green": green}},
        "without-blue": {**head, "clusters": {"green": serving_green}},
        "with-blue-2": {**head, "clusters": {"green": serving_green, "blue-2": blue_2}},
        "without-green": {**head, "clusters": {"blue-2": {**blue_2, "weight": 100}}},
    }


def synthesized(root: Path, configs: dict[str, dict[str, Any]]) -> dict[str, Path]:
    """Each configuration synthesized as `make synth` would beside its state (jsii: the caller's thread), the colours cut
    down to what the emulator holds; each a checkout changed_stacks can compare (cdktf.json, cdktf.out)."""
    from model.loading import load_config
    from tests.support.synth import synthesize

    found = {}
    for name, config in configs.items():
        where = root / "syntheses" / name
        where.mkdir(parents=True)
        write_project_file(where, {**config, "state": {"directory": str(where / "terraform-state")}})
        synthesize(load_config(where / "cdktf.json"), where / "cdktf.out")
        hold_colours(where / "cdktf.out")
        found[name] = where
    return found


@dataclass
class Cycle:
    steps: dict[str, Step] = field(default_factory=dict)  # by name, in order
    routes: dict[str, list[str]] = field(default_factory=dict)  # after each step: each public host's problems
    weights: dict[str, dict[str, Any]] = field(default_factory=dict)  # after named steps: parameter and rules
    lock: dict[str, str | None] = field(default_factory=dict)  # after named steps: the lock's holder (None: free)
    facts: dict[str, Any] = field(default_factory=dict)  # other readings, by name
    seconds: dict[str, float] = field(default_factory=dict)


class Runner:
    """The world of the cycle and the steps on it: `stage` puts a configuration in place as a merge would."""

    def __init__(self, world: EmulatedWorld, syntheses: dict[str, Path], cycle: Cycle) -> None:
        self.world, self.syntheses, self.cycle = world, syntheses, cycle
        self.stage_name = ""
        self.base: Path | None = None

    # --- what a merge and the workflows do ---------------------------------------------------------------------

    def stage(self, name: str) -> None:
        """The configuration `name` merged: the project's cdktf.json and cdktf.out become its (as `make synth` writes
        them); the one before is the base changed_stacks compares with."""
        self.base = self.syntheses[self.stage_name] if self.stage_name else None
        self.stage_name = name
        where = self.syntheses[name]
        self.world.project.write_config(stage_config(where))
        shutil.rmtree(self.world.root / "cdktf.out", ignore_errors=True)
        shutil.copytree(where / "cdktf.out", self.world.root / "cdktf.out")

    def changes(self, name: str) -> dict[str, Any]:
        """deploy.yml's changes job: `python -m scripts.ci.changed_stacks` against the merge's base."""
        base = ["--base-dir", str(self.base)] if self.base else ["--base-ref", "0" * 40]
        step = self.step(name, "python", "-m", "scripts.ci.changed_stacks", *base, "--head-dir", str(self.world.root))
        return dict(json.loads(step.run.output.strip().splitlines()[-1])) if step.run.returncode == 0 else {}

    def deploy(self, name: str, *stacks: str, named: list[str] | None = None) -> Step:
        """A deploy job's step: `python -m scripts.ci.deploy_stacks`, a colour's with the changes job's `named`."""
        extra = ["--named", json.dumps(named)] if named is not None else []
        return self.step(name, "python", "-m", "scripts.ci.deploy_stacks", *stacks, "--project-dir", str(self.world.root), *extra)

    def shift(self, name: str, *arguments: str, env: dict[str, str] | None = None) -> Step:
        """shift.yml's step, where the colours' preview hosts answer, time running faster."""
        return self.step(name, "python", "-m", "tools.shift", *arguments, "--config", str(self.config), env=env, probing=True)

    def step(self, name: str, *command: str, env: dict[str, str] | None = None, probing: bool = False) -> Step:
        return self.recorded(name, self.world.step(*command, env={**field_env(), **(env or {})}, probing=probing))

    def recorded(self, name: str, done: Step) -> Step:
        """A step as it ran, and each public host's problems after it."""
        self.cycle.steps[name] = done
        self.cycle.seconds[name] = done.run.seconds
        self.cycle.routes[name] = self.routes()
        return done

    # --- a step stopped part-way -----------------------------------------------------------------------------------

    def shift_stopped(self, name: str, *arguments: str, when: str) -> Step:
        """shift.yml's step, cancelled: SIGTERM once its output has a line holding `when`."""
        world = self.world
        command = world.previews.command("python", "-m", "tools.shift", *arguments, "--config", str(self.config))
        env = {**world.project.env, **world.github_env(str(len(world.steps))), **world.previews.environment(), **field_env()}
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=world.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert process.stdout is not None
        said = []
        for line in process.stdout:
            said.append(line)
            if when in line:
                process.send_signal(signal.SIGTERM)
                break
        rest, _ = process.communicate(timeout=600)
        run = Run(" ".join(command), process.returncode, "".join(said) + rest, time.monotonic() - started)
        world.steps.append(Step(run, ""))
        return self.recorded(name, world.steps[-1])

    # --- readings ----------------------------------------------------------------------------------------------------

    @property
    def config(self) -> Path:
        return self.world.config_file

    def routes(self) -> list[str]:
        """Each public host's problems now (none: it reaches healthy targets of configured, deployed colours only), once
        the clusters' controllers caught up with what the step did."""
        self.world.clusters.reconcile()
        settings = self.world.project.settings
        elbv2, eks = self.world.project.aws("elbv2"), self.world.project.aws("eks")
        try:
            routes = read_routes(elbv2, settings.project)
        except LookupError:
            return []  # no shared load balancer yet: no public host
        clusters = set(eks.list_clusters()["clusters"])
        problems = []
        for app, route in routes.public.items():
            for colour, weight in route.weights.items():
                if colour not in settings.clusters:
                    problems.append(f"{app}: forwards to {colour} (weight {weight}), which the configuration lacks")
                    continue
                if not weight:
                    continue
                if cluster_name(settings, colour) not in clusters:
                    problems.append(f"{app}: gives {colour} weight {weight}, but its cluster is gone")
                health = elbv2.describe_target_health(TargetGroupArn=route.target_groups[colour])["TargetHealthDescriptions"]
                if not any(t["TargetHealth"]["State"] == "healthy" for t in health):
                    problems.append(f"{app}: gives {colour} weight {weight}, but no healthy target")
        return problems

    def record(self, name: str) -> None:
        """The live weights (parameter and every rule) and the lock, after the step `name`."""
        self.cycle.weights[name] = live_weights(self.world.project)
        ssm = self.world.project.aws("ssm")
        holder = TrafficLock(ssm, None, self.world.project.settings.project, "", SystemClock()).holder()
        self.cycle.lock[name] = holder.describe() if holder else None

    def healthy_traffic(self, colour: str, *, minutes: int = 120) -> None:
        """What the colour's target groups publish while serving well, minute by minute from a few minutes ago: requests,
        no 5xx, no refused connection, fast answers (the shift's gate reads them: tools/shift/metrics.py)."""
        settings = self.world.project.settings
        routes = read_routes(self.world.project.aws("elbv2"), settings.project)
        cloudwatch = self.world.project.aws("cloudwatch")
        start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
        for app in applications(settings):
            dimensions = [
                {"Name": "TargetGroup", "Value": dimension(routes.target_groups[(app.name, colour)])},
                {"Name": "LoadBalancer", "Value": dimension(routes.load_balancer_arn)},
            ]
            data = []
            for minute in range(minutes):
                at = start + timedelta(minutes=minute)
                for metric, value in (("RequestCount", 600), ("HTTPCode_Target_5XX_Count", 0), ("TargetConnectionErrorCount", 0)):
                    data.append(
                        {"MetricName": metric, "Value": value, "Unit": "Count", "Timestamp": at, "Dimensions": dimensions}
                    )
                slow = math.ceil(600 / 50)
                data.append(
                    {
                        "MetricName": "TargetResponseTime",
                        "Values": [0.05, 0.3],
                        "Counts": [600 - slow, slow],
                        "Unit": "Seconds",
                        "Timestamp": at,
                        "Dimensions": dimensions,
                    }
                )
            for first in range(0, len(data), 500):
                cloudwatch.put_metric_data(Namespace="AWS/ApplicationELB", MetricData=data[first : first + 500])

    def lose_cluster(self, colour: str) -> None:
        """The colour's cluster deleted out of band (by hand, or a destroy stopped after it): its node groups, then it."""
        eks = self.world.project.aws("eks")
        name = cluster_name(self.world.project.settings, colour)
        for group in eks.list_nodegroups(clusterName=name)["nodegroups"]:
            eks.delete_nodegroup(clusterName=name, nodegroupName=group)
        eks.delete_cluster(name=name)


def stage_config(where: Path) -> dict[str, Any]:
    """A synthesized stage's configuration, without the state it was synthesized beside."""
    config: dict[str, Any] = json.loads((where / "cdktf.json").read_text())["context"]["config"]
    config.pop("state", None)
    return config


def field_env() -> dict[str, str]:
    """The field around every step (tests/support/field): a faster clock."""
    return {"PYTHONPATH": str(FIELD_DIR), "FIELD": json.dumps({"clock_scale": FIELD_CLOCK_SCALE})}


def expiring_in(minutes: int) -> dict[str, str]:
    """Credentials the workflow handed over, ending `minutes` from now (configure-aws-credentials' expiry, as
    scripts/ci/credential_expiry.py writes it)."""
    return {"AWS_CREDENTIAL_EXPIRATION": (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat(timespec="seconds")}


def upgrade_cycles(root: Path, syntheses: dict[str, Path]) -> Cycle:
    """Both cycles, each step recorded (the module's docstring says what happens and why)."""
    cycle = Cycle()
    started = time.monotonic()
    world = EmulatedWorld.start(root / "world", stage_config(syntheses["cycle-1"]), syntheses["cycle-1"] / "cdktf.out")
    run = Runner(world, syntheses, cycle)
    cycle.facts["configurations"] = {name: stage_config(where) for name, where in syntheses.items()}
    try:
        # --- cycle 1: blue serving, green built beside it -------------------------------------------------------------
        run.stage("cycle-1")
        changed = run.changes("changes: first push")
        run.deploy("deploy common and traffic", "common", "traffic")
        for colour in ("blue", "green"):
            run.deploy(f"deploy {colour}", colour, named=changed.get("named", []))
        world.clusters.reconcile()
        world.answer_previews("blue")
        world.answer_previews("green")
        run.step("readiness of green", "python", "-m", "tools.readiness", "green", "--config", str(run.config), probing=True)
        run.record("deployed")

        # Credentials that end before the shift could: refused before anything moves.
        run.shift("shift with credentials that end first", "--to", "green", "--step", STEP, env=expiring_in(10))
        run.record("credentials refused")
        # A cancelled run's SIGTERM while step 1 is watched: rolled back, lock released.
        run.healthy_traffic("green")
        run.shift_stopped("shift stopped by SIGTERM", "--to", "green", "--step", STEP, when="| in effect")
        run.record("stopped")
        run.shift("shift to green", "--to", "green", "--step", STEP)
        run.record("shifted to green")

        # The config still says blue 100 (no shift writes it): a change to green's nodes must be refused, green serves.
        run.stage("green-nodes")
        run.changes("changes: green's nodes")
        run.deploy("deploy green's new nodes", "green", named=["green"])
        cycle.facts["green's instance types"] = node_instance_types(world, "green")
        # The same change to blue, which the config still calls serving but the live weights give nothing: planned, the
        # node group replaced create-before-destroy.
        run.stage("blue-nodes")
        cycle.facts["blue's node group, planned"] = planned_actions(world, "blue", "aws_eks_node_group")
        run.stage("cycle-1")  # reverted

        run.shift("drain back to blue", "--to", "blue", "--now")
        run.record("drained to blue")
        run.shift("drain forward to green", "--to", "green", "--now")
        run.record("drained to green")

        # Removing blue before it is retired: refused by the plan of traffic, nothing changed.
        run.stage("without-blue")
        cycle.facts["removed too early"] = run.changes("changes: blue removed too early")
        run.deploy("deploy traffic without a running blue", "traffic")
        run.stage("cycle-1")  # reverted

        run.step("retire blue", "python", "-m", "tools.retire", "blue", "--auto-approve", "--config", str(run.config))
        cycle.facts["blue after its retirement"] = world.colour("blue")
        cycle.facts["blue's state"] = world.state("blue")
        run.record("blue retired")
        # A drain before the merge that removes blue: blue stays out of every rule.
        run.shift("drain between the retirement and the removal", "--to", "green", "--now")
        run.record("drained after the retirement")
        run.stage("without-blue")
        cycle.facts["blue removed"] = run.changes("changes: blue removed")
        run.deploy("deploy traffic without blue", "traffic")
        run.record("blue removed")

        # --- cycle 2: green serving, blue-2 built beside it --------------------------------------------------------------
        run.stage("with-blue-2")
        changed = run.changes("changes: blue-2 added")
        run.deploy("deploy traffic with blue-2", "traffic")
        run.deploy("deploy blue-2", "blue-2", named=changed.get("named", []))
        world.clusters.reconcile()
        world.answer_previews("blue-2")
        # A change that would replace green's target group while it serves: refused by the plan of traffic.
        cycle.facts["plan replacing green's target group"] = replacing_target_groups(run)
        run.healthy_traffic("blue-2")
        run.shift("shift to blue-2", "--to", "blue-2", "--step", STEP)
        run.record("shifted to blue-2")
        run.lose_cluster("green")
        run.step("retire green, its cluster gone", "python", "-m", "tools.retire", "green", "--force", "--auto-approve",
                 "--config", str(run.config))  # fmt: skip
        cycle.facts["green after its retirement"] = world.colour("green")
        cycle.facts["green's state"] = world.state("green")
        run.stage("without-green")
        cycle.facts["green removed"] = run.changes("changes: green removed")
        run.deploy("deploy traffic without green", "traffic")
        run.record("green removed")
    finally:
        world.stop()
        cycle.seconds["all"] = time.monotonic() - started
        shutil.rmtree(root, ignore_errors=True)
    return cycle


def node_instance_types(world: EmulatedWorld, colour: str) -> list[list[str]]:
    eks = world.project.aws("eks")
    name = cluster_name(world.project.settings, colour)
    groups = eks.list_nodegroups(clusterName=name)["nodegroups"]
    return [eks.describe_nodegroup(clusterName=name, nodegroupName=g)["nodegroup"]["instanceTypes"] for g in groups]


def planned_actions(world: EmulatedWorld, stack: str, kind: str) -> tuple[Run, list[list[str]]]:
    """`terraform plan` of a stack as the deploy plans it, and the actions planned for each resource of a kind (Terraform's
    plan JSON: ["create", "delete"] is a replacement that creates first)."""
    where = world.project.stack_dir(stack)
    init = world.project.init(stack)  # the merge's cdktf.out is fresh: no provider installed yet
    if init.returncode != 0:
        return init, []
    plan = world.project.run("terraform", "plan", "-input=false", "-no-color", "-lock=false", "-out=planned", cwd=where)
    if plan.returncode != 0:
        return plan, []
    shown = json.loads(world.project.run("terraform", "show", "-json", "planned", cwd=where).output)
    return plan, [change["change"]["actions"] for change in shown.get("resource_changes", []) if change["type"] == kind]


def replacing_target_groups(run: Runner) -> Run:
    """`terraform plan` of traffic (the pull request's plan step) with every target group on another port: a change
    that would replace each of them. The synthesized stack is put back afterwards."""
    stack = run.world.root / "cdktf.out" / "stacks" / "traffic" / "cdk.tf.json"
    kept = stack.read_text()
    document = json.loads(kept)
    groups = document["resource"]["aws_lb_target_group"]
    for name, group in groups.items():
        # What synth writes once the port changes (components/application_routes.py TARGET_GROUP_PORT): the group's port,
        # its shape tag and the shape its guard expects.
        groups[name] = {**json.loads(json.dumps(group).replace('"HTTP:80:ip', '"HTTP:8080:ip')), "port": 8080}
    stack.write_text(json.dumps(document))
    try:
        step = run.step(
            "plan traffic replacing its target groups",
            "python",
            "-m",
            "scripts.ci.plan_stacks",
            "traffic",
            "--project-dir",
            str(run.world.root),
        )
    finally:
        stack.write_text(kept)
    return step.run
