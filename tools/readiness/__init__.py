"""Has a colour proven itself? What `python -m tools.shift --to <colour>` checks before it moves any weight, and what
`python -m tools.readiness <colour>` reports on its own. Each check can fail on a colour built an hour ago:

1. cluster_state.py: its EKS cluster is ACTIVE at the Kubernetes version its config names.
2. insights.py: EKS upgrade insights, refreshed on request (StartInsightsRefresh) and newer than the cluster's last
   update: ERROR blocks, WARNING is listed. EKS itself refreshes them about once a day.
3. release.py: the release the config names is what runs: the parent Application and every child the colour's
   release defines (the component registry at its Git revision), each Synced and Healthy at the chart version or
   revision configured for that colour. A child that is missing is named; Applications outside that set are ignored.
4. targets.py: each application's target group of the colour, in the shared load balancer, has healthy targets;
   gates.py: and each of its pods carries the controller's target-health readiness gate (else a rollout does not wait).
5. probe.py: for each application, an HTTPS request through the colour's own preview host name crosses DNS, the shared
   load balancer, TLS and a pod, at the application's probe path, and the answer is the one its config expects (the
   colour's, at the image tag the colour names).

Every check runs (but those the cluster's absence makes meaningless), so one report names everything missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model.config import ApplicationProbeConfig, Config, applications, cluster_name, preview_hostname
from model.platform import Component
from tools.aws import Aws, aws_problem
from tools.clock import Clock


@dataclass(frozen=True)
class Finding:
    ready: bool
    detail: str
    notes: tuple[str, ...] = ()  # listed under the line, not blocking (insights in WARNING, say)

    def lines(self) -> list[str]:
        return [f"  {'ok     ' if self.ready else 'MISSING'}  {self.detail}", *(f"           {note}" for note in self.notes)]


@dataclass(frozen=True)
class Probed:
    """One application as the colour should answer for it."""

    name: str
    preview_hostname: str
    probe: ApplicationProbeConfig
    image_tag: str | None  # the tag the colour runs of its image, when it has one
    namespace: str = ""
    service: str = ""  # the Service its TargetGroupBinding (named after the application) puts behind the target group

    def expected(self, colour: str) -> dict[str, str]:
        """The JSON fields its answer must hold, `{colour}` and `{image_tag}` filled."""
        filled = {"colour": colour, "image_tag": self.image_tag or ""}
        return {field: value.format_map(filled) for field, value in self.probe.expect_json.items()}


@dataclass(frozen=True)
class Target:
    """What the config says the colour runs: the facts each check holds the colour to."""

    colour: str
    cluster: str
    kubernetes_version: str
    project: str
    applications: tuple[Probed, ...]

    @classmethod
    def of(cls, config: Config, colour: str) -> Target:
        release = config.release(colour)
        return cls(
            colour=colour,
            cluster=cluster_name(config, colour),
            kubernetes_version=config.clusters[colour].kubernetes_version,
            project=config.project,
            applications=tuple(
                Probed(
                    app.name,
                    preview_hostname(config, app, colour),
                    app.config.probe,
                    release.applications[app.name].image_tag,
                    namespace=app.namespace,
                    service=app.service_name,
                )
                for app in applications(config)
            ),
        )


@dataclass
class Readiness:
    """The checks of one colour against its config. Tests hand in the prober (a local HTTPS server stands in for the
    preview host) and the registry of the colour's revision."""

    config: Config
    aws: Aws
    clock: Clock
    refresh_insights: bool = True  # False: --skip-insights-refresh, the insights as EKS last computed them
    prober: Any = None  # probe.Prober; default: the system's DNS and trust store, port 443
    components: Callable[[str], tuple[Component, ...]] | None = None  # by Git revision; default: release.registry_at
    out: Callable[[str], None] = field(default=lambda line: None)  # progress while it waits (insights, the probe)

    def check(self, colour: str) -> list[Finding]:
        """Every check of the colour, each finding said (`out`) as soon as it is known, in the report's order."""
        from tools.readiness import cluster_state, gates, insights, probe, release, targets

        target = Target.of(self.config, colour)
        state = cluster_state.cluster_state(self.aws.eks, target)
        findings = self._said([state.finding])
        if not state.finding.ready:
            skipped = "not checked: the cluster is not there at its configured version"
            return findings + self._said([Finding(False, f"EKS insights, Argo CD, target groups, preview hosts: {skipped}")])
        refresh = self.refresh_insights
        checks: list[tuple[str, Callable[[], list[Finding]]]] = [
            (
                "EKS upgrade insights",
                lambda: [
                    insights.fresh_insights(self.aws.eks, target, state.changed_at, self.clock, refresh=refresh, say=self.out)
                ],
            ),
            (
                "Argo CD applications",
                lambda: release.applications(
                    lambda: self.aws.kube(target.cluster),
                    release.expected(self.config, colour, self.components or release.registry_at),
                ),
            ),
            ("target groups", lambda: targets.healthy_targets(self.aws.elbv2, target)),
            ("readiness gates", lambda: gates.readiness_gates(lambda: self.aws.kube(target.cluster), target)),
            (
                "preview hosts",
                lambda: [
                    probe.probe_preview(target, app, self.clock, self.prober or probe.Prober(), say=self.out)
                    for app in target.applications
                ],
            ),
        ]
        for what, run in checks:
            # An AWS call denied (or the login expiring) part-way fails that check with AWS's reason; the rest still run.
            try:
                found = run()
            except Exception as err:
                said = aws_problem(err)
                if said is None:
                    raise
                found = [Finding(False, f"{what}: could not check: {said}")]
            findings += self._said(found)
        return findings

    def _said(self, findings: list[Finding]) -> list[Finding]:
        for finding in findings:
            for line in finding.lines():
                self.out(line)
        return findings


def missing(findings: list[Finding]) -> list[str]:
    return [f.detail for f in findings if not f.ready]
