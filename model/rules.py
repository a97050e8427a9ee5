"""Every rule and warning of the configuration, gathered: each is written beside the settings it checks
(model/config/<section>.py; those spanning sections in model/config/across.py). A rule adds a problem naming the key,
the bad value and what is allowed; a key that already failed is not reported again, so the order below is the order
the rules judge in.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from model.config import Config
from model.config.across import colour_entry_rules, credential_rules, load_balancer_limits, shared_host_rules
from model.config.application_rules import application_rules, image_tag_warnings
from model.config.applications import applications
from model.config.argocd import argocd_rules
from model.config.clusters import calendar_warnings, cluster_rules
from model.config.eks import api_warnings, eks_rules
from model.config.gitops import credential_name_rules, placeholder_warnings
from model.config.platform_release import revision_warnings
from model.config.project import state_rules
from model.config.traffic_settings import preview_rules, preview_warnings, waf_rules
from model.config.vpc import network_rules
from model.paths import PROJECT_DIR
from model.problems import Problems


def _shared_load_balancer_rules(c: Config, p: Problems) -> None:
    """After each application's own rules: its hosts against the others', entries naming it, the quotas."""
    shared_host_rules(c, p, applications(c))
    colour_entry_rules(c, p)
    load_balancer_limits(c, p)


RULES: tuple[Callable[[Config, Problems], None], ...] = (
    network_rules,
    credential_name_rules,
    credential_rules,
    application_rules,
    _shared_load_balancer_rules,
    argocd_rules,
    eks_rules,
    preview_rules,
    state_rules,
    cluster_rules,
    waf_rules,
)


def check_all(config: Config, problems: Problems) -> None:
    for rule in RULES:
        rule(config, problems)


def config_warnings(config: Config, *, today: dt.date | None = None, project: Path = PROJECT_DIR) -> list[str]:
    """Things that synthesize but would not work once deployed, or will cost or change soon.
    today: the day the EKS calendar is read for (default: today, UTC, as AWS bills).
    project: the Git repository the colours' revisions are of (default: this one)."""
    return (
        revision_warnings(config, project)
        + calendar_warnings(config, today or dt.datetime.now(dt.UTC).date())
        + placeholder_warnings(config)
        + image_tag_warnings(config)
        + api_warnings(config.eks)
        + preview_warnings(config)
    )
