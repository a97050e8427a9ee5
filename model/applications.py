"""The team's applications as the configuration names them (`applications.<name>`), every default resolved.

Everything that serves an application reads it from here: common's role and image repository, the traffic stack's
target groups, listener rules and records, each colour's Pod Identity association, child Application and
TargetGroupBinding, readiness, the shift and the teardown. So adding an application is an edit of the configuration,
never of the code, and no module names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model.config import ApplicationConfig, ApplicationImageConfig, ApplicationProbeConfig, Config
from model.paths import PROJECT_DIR


@dataclass(frozen=True)
class Application:
    name: str  # the child Application, its Helm release, its role `<project>-<name>`, its target groups' tag
    host: str  # the label of its public host `<host>.<sub-zone>`
    description: str
    namespace: str
    service_account: str
    service_name: str  # the Service its chart makes, which the colour's TargetGroupBinding names
    service_port: int
    repo_url: str | None  # None: this repository, at each colour's gitops_revision
    path: str  # its chart's directory in that repository
    policy: str  # a policy document of the project (relative path), or "" for none
    health_check_path: str
    probe: ApplicationProbeConfig
    image: ApplicationImageConfig | None
    wave: int
    min_requests: int | None
    values: Mapping[str, Any]
    group: str  # its Argo CD project

    @property
    def key(self) -> str:
        """Its part of output and setting names (`<key>_role_arn`)."""
        return self.name.replace("-", "_")

    @property
    def policy_file(self) -> Path | None:
        return PROJECT_DIR / self.policy if self.policy else None

    @property
    def image_output(self) -> str:
        """Common's output with its ECR repository's URL (an application with `image`)."""
        return f"{self.key}_image_repository_url"

    @property
    def from_this_repository(self) -> bool:
        return self.repo_url is None


def _of(name: str, app: ApplicationConfig) -> Application:
    return Application(
        name=name,
        host=app.host,
        description=app.description or f"the application {name}",
        namespace=app.namespace or name,
        service_account=app.service_account or name,
        service_name=app.service.name or name,
        service_port=app.service.port,
        repo_url=app.source.repo_url,
        path=app.source.path,
        policy=app.policy,
        health_check_path=app.health_check_path,
        probe=app.probe,
        image=app.image,
        wave=app.wave,
        min_requests=app.min_requests,
        values=app.values,
        group=app.group,
    )


def applications(config: Config) -> tuple[Application, ...]:
    """Every application, in the order the configuration lists them."""
    return tuple(_of(name, app) for name, app in config.applications.items())


def application(config: Config, name: str) -> Application:
    return _of(name, config.applications[name])


def public_hostname(config: Config, app: Application) -> str:
    """Where its users reach it, whichever colour serves: the shared load balancer splits it by the live weights."""
    return f"{app.host}.{config.dns.zone_name}"


def preview_hostname(config: Config, app: Application, colour: str) -> str:
    """The colour's own host of the application, beside the public one: the shared load balancer sends it to that
    colour only, at any weight (readiness, smoke tests, a browser). One label (`app-green`), so the sub-zone's
    wildcard certificate covers it."""
    return f"{app.host}-{colour}.{config.dns.zone_name}"


def image_repository_name(config: Config, app: Application) -> str:
    """The ECR repository common makes for it (an application with `image`)."""
    assert app.image is not None
    return app.image.repository or f"{config.project}/{app.name}"
