"""What the readiness checks share: what the config says a colour runs (Target, one Probed per application), and what
each check finds (Finding). A module of its own so that the checks (cluster_state.py, insights.py, ...) and the
Readiness that runs them (__init__.py) import it, and neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass

from model.config import ApplicationProbeConfig, Config, applications, cluster_name, preview_hostname


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
