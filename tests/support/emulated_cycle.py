"""The world an upgrade cycle runs in on this machine, and the commands of the GitHub workflows run in it: an AWS emulator
process whose EKS clusters each have a Kubernetes API and their controllers (tests/support/fake_clusters.py), and a
scratch project (tests/support/emulated_colour.py `EmulatedProject`) pointed at it, whose colours are cut down to what
the emulator holds. Each step runs as the workflow runs it, in a process of its own, with GitHub's variables set.

    world = EmulatedWorld.start(root, config, synthesis)   # synthesis: a cdktf.out of config, made on jsii's thread
    world.step("python", "-m", "scripts.ci.deploy_stacks", "common", "traffic", "--project-dir", str(world.root))
    world.step("python", "-m", "scripts.ci.deploy_stacks", "blue", "--project-dir", str(world.root))
    world.clusters.reconcile()                               # the controllers catch up (they also do before each answer)
    world.colour("blue")                                     # what AWS holds of blue
    world.answer_previews("blue")                            # blue's preview hosts answer as its pods would
    world.step("python", "-m", "tools.readiness", "blue", "--config", str(world.config_file), probing=True)
    world.step("python", "-m", "tools.retire", "blue", "--auto-approve", "--config", str(world.config_file))
    world.stop()

A step run with `probing=True` reaches the colours' preview hosts (tests/support/preview_hosts.py: a local HTTPS server
on port 443 of a loopback address of its own, the names resolved there in the step's own mount namespace, its
authority trusted through SSL_CERT_FILE): what `python -m tools.readiness` and `python -m tools.shift` probe.

`retire_on_the_emulator` is the background check of tests/test_emulated_colour.py: common and traffic deployed, then
blue, proven ready, and retired by `python -m tools.retire`. Its wall time (measured alone on this 2-core host, in
seconds): the deploy of common and traffic ~125 (the provider's own waits: the load balancer's 2 x 30 s, Route53's
changes, a KMS key), blue ~26, readiness ~3 (a second plan of blue beside it, ~7), the retirement 80-125 (the CLI's
synthesis and init ~24; the hook ~44, one POLL_SECONDS per wait, tools/clock.py; the cluster's delete 7-56: the
provider waits a random 0-60 s before DeleteCluster, `tfresource.WithDelayRand(1*time.Minute)` in its
internal/service/eks/cluster.go `resourceClusterDelete`); ~250-290 in all.
"""

from __future__ import annotations

import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.applications import applications, preview_hostname
from model.config import cluster_name
from model.routes import target_group_name
from scripts.emulator import MotoProcess
from scripts.rehearse import create_parent_zone, live_weights
from scripts.scratch_project import Run
from tests.support.emulated_colour import EmulatedProject, hold_colours
from tests.support.fake_clusters import FakeClusters, released_in
from tests.support.preview_hosts import PreviewHosts
from tests.support.preview_server import Answer
from tools.kube import APPLICATIONS

# The emulator issues certificates at once and holds AWS's managed policies (common's roles attach some), as the
# rehearsal's do (tests/test_rehearsal.py).
SETTINGS = {"MOTO_ACM_VALIDATION_WAIT": "0", "MOTO_IAM_LOAD_MANAGED_POLICIES": "true"}
# What GitHub sets in every job (GitHub docs, "Store information in variables", default environment variables).
GITHUB = {"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "example/eks-bg", "GITHUB_REF": "refs/heads/main"}


@dataclass
class Step:
    """One command of a workflow as it ran: its run (exit status, output, seconds) and the job summary it wrote."""

    run: Run
    summary: str


@dataclass
class Colour:
    """What AWS holds of a colour: its cluster, the targets registered in its target groups, the public rules that
    forward to it, the security group EKS made for its cluster."""

    cluster: dict[str, Any] | None  # DescribeCluster's, None: no such cluster
    registered: dict[str, list[str]]  # application -> target IPs in the colour's target group
    forwarded: dict[str, int]  # application -> weight of the colour in its public rule (absent: not forwarded to)
    security_groups: list[str]  # names of the security groups EKS made for its cluster


@dataclass
class EmulatedWorld:
    root: Path
    server: MotoProcess
    clusters: FakeClusters
    project: EmulatedProject
    previews: PreviewHosts
    steps: list[Step] = field(default_factory=list)

    @classmethod
    def start(cls, root: Path, config: dict[str, Any], synthesis: Path) -> EmulatedWorld:
        """An emulator serving every cluster's Kubernetes API here, the parent zone a user already has, and a scratch
        project under root/project holding a copy of synthesis (a cdktf.out of config) with its colours cut down."""
        clusters = FakeClusters()
        server = MotoProcess({**SETTINGS, **clusters.emulator_settings()})
        try:
            server.ready()
            project = EmulatedProject.create(root / "project", server.endpoint, config)
            assert isinstance(project, EmulatedProject)  # Project.create makes the class it is called on
            create_parent_zone(project, project.settings.dns.parent_zone)
            shutil.copytree(synthesis, project.root / "cdktf.out", ignore=shutil.ignore_patterns(".terraform*"))
            hold_colours(project.root / "cdktf.out")
            previews = PreviewHosts.start(project.settings.dns.zone_name, root / "previews")
        except BaseException:
            server.stop()
            clusters.close()
            raise
        clusters.watch(project.aws, released_in(project.state_dir))
        return cls(project.root, server, clusters, project, previews)

    @property
    def config_file(self) -> Path:
        return self.root / "cdktf.json"

    def step(self, *command: str, env: dict[str, str] | None = None, probing: bool = False) -> Step:
        """A workflow's command in its own process, in the project, with GitHub's variables and a fresh job summary.
        probing: where the colours' preview hosts resolve to the preview server, whose authority it trusts."""
        if probing:
            command = tuple(self.previews.command(*command))
            env = {**self.previews.environment(), **(env or {})}
        summary = self.root / f"summary-{len(self.steps)}.md"
        outputs = self.root / f"outputs-{len(self.steps)}"
        files = {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
        github = {**GITHUB, "GITHUB_WORKSPACE": str(self.root), **files}
        run = self.project.run(*command, env={**github, **(env or {})})
        self.steps.append(Step(run, summary.read_text() if summary.exists() else ""))
        return self.steps[-1]

    def answer_previews(self, colour: str) -> None:
        """Each application's preview host of colour answers as the colour's pods of the sample app would: its colour
        and the image tag the colour names for it, on its probe path."""
        config = self.project.settings
        release = config.release(colour)
        for app in applications(config):
            tag = release.applications[app.name].image_tag or ""
            self.previews.server.answers[preview_hostname(config, app, colour)] = Answer(colour, tag, path=app.probe.path)

    def colour(self, colour: str) -> Colour:
        config = self.project.settings
        eks, elbv2, ec2 = self.project.aws("eks"), self.project.aws("elbv2"), self.project.aws("ec2")
        name = cluster_name(config, colour)
        found = None
        if name in eks.list_clusters()["clusters"]:
            found = eks.describe_cluster(name=name)["cluster"]
        registered = {}
        for app in applications(config):
            (group,) = elbv2.describe_target_groups(Names=[target_group_name(config.project, app.name, colour)])["TargetGroups"]
            health = elbv2.describe_target_health(TargetGroupArn=group["TargetGroupArn"])["TargetHealthDescriptions"]
            registered[app.name] = sorted(t["Target"]["Id"] for t in health)
        forwarded = {app: weights[colour] for app, weights in live_weights(self.project)["rules"].items() if colour in weights}
        groups = ec2.describe_security_groups(Filters=[{"Name": "tag:aws:eks:cluster-name", "Values": [name]}])
        return Colour(found, registered, forwarded, sorted(g["GroupName"] for g in groups["SecurityGroups"]))

    def applications(self, colour: str) -> list[str]:
        """The Argo CD Applications of a colour's cluster, read through the real client (tools/kube.py `KubeApi.for_eks`:
        the endpoint and authority DescribeCluster gives, an EKS token), in this process."""
        import boto3

        from tools.kube import KubeApi

        config = self.project.settings
        keys = {name.lower(): value for name, value in self.project.credentials.items()}
        session = boto3.Session(region_name=config.region, **keys)
        eks = self.project.aws("eks")
        api = KubeApi.for_eks(session, eks, cluster_name(config, colour), config.region)
        listing = api.get(APPLICATIONS.format(namespace="argocd")) or {}
        return sorted(item["metadata"]["name"] for item in listing.get("items", []))

    def state(self, stack: str) -> list[str]:
        """`terraform state list` of a stack (its local state, as the stack's directory reads it)."""
        listed = self.project.run("terraform", "state", "list", cwd=self.project.stack_dir(stack))
        return listed.output.split() if listed.returncode == 0 else [f"(terraform state list failed: {listed.output})"]

    def stop(self) -> None:
        self.server.stop()
        self.clusters.close()
        self.previews.close()


@dataclass
class Retirement:
    """A colour deployed on the emulator through the deploy workflow's step, then retired by `python -m tools.retire`."""

    deploys: dict[str, Step]  # "common traffic", the colour: `python -m scripts.ci.deploy_stacks ...`
    deployed: Colour  # what AWS held of the colour once deployed and its controllers caught up
    applications: list[str]  # its Argo CD Applications, read through KubeApi.for_eks
    readiness: Step  # `python -m tools.readiness <colour>`, its preview hosts answering as its pods would
    synced: list[str]  # the clusters the fake Argo CD synced, in order
    replan: Run  # `terraform plan -detailed-exitcode` of the colour right after its deploy
    retire: Step  # `python -m tools.retire <colour> --auto-approve`
    events: list[str]  # what the colour's Kubernetes API was asked to do, in order
    retired: Colour  # what AWS held of the colour afterwards
    state: list[str]  # the colour's Terraform state afterwards
    weights: dict[str, Any]  # the live weights before the retirement and after it (scripts/rehearse.py `live_weights`)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each part


def retire_on_the_emulator(root: Path, config: dict[str, Any], synthesis: Path, colour: str) -> Retirement:
    """common and traffic, then colour, deployed through the deploy workflow's step; colour's controllers caught up;
    then `python -m tools.retire <colour> --auto-approve` (the retire workflow's step). config must give colour no
    weight and another colour all of it."""
    seconds: dict[str, float] = {}
    started = time.monotonic()
    world = EmulatedWorld.start(root, config, synthesis)
    seconds["emulator and project"] = time.monotonic() - started
    try:
        deploy = ("python", "-m", "scripts.ci.deploy_stacks")
        deploys = {"common traffic": world.step(*deploy, "common", "traffic", "--project-dir", str(world.root))}
        seconds["deploy common and traffic"] = deploys["common traffic"].run.seconds
        assert deploys["common traffic"].run.returncode == 0, deploys["common traffic"].run.output[-6000:]
        deploys[colour] = world.step(*deploy, colour, "--project-dir", str(world.root))
        seconds[f"deploy {colour}"] = deploys[colour].run.seconds
        assert deploys[colour].run.returncode == 0, deploys[colour].run.output[-6000:]
        world.clusters.reconcile()
        deployed, names = world.colour(colour), world.applications(colour)
        world.answer_previews(colour)
        before = live_weights(world.project)
        plan = ("terraform", "plan", "-detailed-exitcode", "-input=false", "-no-color")
        with ThreadPoolExecutor(max_workers=1) as beside:  # both only read: the plan waits on the provider, not on us
            planned = beside.submit(world.project.run, *plan, cwd=world.project.stack_dir(colour))
            readiness = world.step("python", "-m", "tools.readiness", colour, "--config", str(world.config_file), probing=True)
            replan = planned.result()
        seconds[f"readiness of {colour}"] = readiness.run.seconds
        seconds[f"plan {colour} again (beside the readiness)"] = replan.seconds
        retire = world.step("python", "-m", "tools.retire", colour, "--auto-approve", "--config", str(world.config_file))
        seconds[f"retire {colour}"] = retire.run.seconds
        name = cluster_name(world.project.settings, colour)
        events = list(world.clusters.events.get(name, []))
        return Retirement(
            deploys=deploys,
            deployed=deployed,
            applications=names,
            readiness=readiness,
            synced=list(world.clusters.syncs),
            replan=replan,
            retire=retire,
            events=events,
            retired=world.colour(colour),
            state=world.state(colour),
            weights={"before": before, "after": live_weights(world.project)},
            seconds=seconds,
        )
    finally:
        world.stop()
        shutil.rmtree(root, ignore_errors=True)
        seconds["all"] = time.monotonic() - started
