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

Its user is the upgrade cycle (tests/support/upgrade_cycle.py). What the steps cost (measured alone on this 2-core host,
in seconds): the deploy of common and traffic ~120 (the provider's own waits: the load balancer's 2 x 30 s, Route53's
changes, a KMS key), a colour ~26, readiness ~2, a retirement 25-125 (the CLI's synthesis and init ~24; the hook, one
POLL_SECONDS per wait, tools/clock.py, unless the field clock runs faster; the cluster's delete 7-56: the provider
waits a random 0-60 s before DeleteCluster, `tfresource.WithDelayRand(1*time.Minute)` in its
internal/service/eks/cluster.go `resourceClusterDelete`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model.config import applications, cluster_name, preview_hostname
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
        github = self.github_env(str(len(self.steps)))
        run = self.project.run(*command, env={**github, **(env or {})})
        summary = Path(github["GITHUB_STEP_SUMMARY"])
        self.steps.append(Step(run, summary.read_text() if summary.exists() else ""))
        return self.steps[-1]

    def github_env(self, tag: str) -> dict[str, str]:
        """What GitHub sets for a job's step: its variables, a job summary and step outputs of its own (by tag)."""
        files = {"GITHUB_STEP_SUMMARY": str(self.root / f"summary-{tag}.md"), "GITHUB_OUTPUT": str(self.root / f"outputs-{tag}")}
        return {**GITHUB, "GITHUB_WORKSPACE": str(self.root), **files}

    def answer_previews(self, colour: str) -> None:
        """Each application's preview host of colour answers as the colour's pods of the sample app would: its colour
        and the image tag the colour names for it, on its probe path."""
        config = self.project.settings
        release = config.release(colour)
        for app in applications(config):
            tag = release.applications[app.name].image_tag or ""
            self.previews.server.answers[preview_hostname(config, app, colour)] = Answer(colour, tag, path=app.config.probe.path)

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
