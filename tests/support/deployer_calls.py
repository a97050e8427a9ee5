"""The call table (tests/support/deployer_calls.yaml) read as requests IAM would judge: for each resource type the
stacks use, each data source, the backend and each operator command, the AWS calls made on create, read, update,
delete and tagging, filled for one project (policies/deployer.Deployer) and turned into tests.support.iam_evaluation.Request.

tests/test_deployer_calls.py evaluates every request against the filled deployer policy, and
tests/test_traffic_operator.py the shift's against the traffic operator's. The ARNs of what the code names (the load
balancer, a target group, the weights and lock parameters, an application's role, repository and build) are the names
the project's own code gives them (`named`), so a name the code moves outside the project's prefix fails the tests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from model.config import applications, image_repository_name, preview_hostname, public_hostname
from model.routes import load_balancer_name, lock_path, target_group_name, weights_parameter
from policies.deployer import Deployer, values
from tests.support.iam_evaluation import Request, Value

TABLE = Path(__file__).with_name("deployer_calls.yaml")
SECTIONS = ("provider", "backend", "resources", "data_sources", "commands")
WHEN = frozenset({"create", "read", "update", "delete", "tag", "run"})
_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


@dataclass(frozen=True)
class Call:
    owner: str  # e.g. "resources.aws_eks_cluster", "commands.tools.log_group"
    when: str
    action: str
    on: tuple[str, ...]
    tagged: tuple[str, ...]  # those of `on` that carry the stacks' default tags
    request_tags: bool
    context: Mapping[str, Value]
    only: str | None
    source: str

    def name(self) -> str:
        """How a failure names the row: owner, when, action."""
        return f"{self.owner} ({self.when}): {self.action}"

    def requests(self, tags: Mapping[str, str]) -> list[Request]:
        """One request per resource the call acts on, each with the condition keys it carries."""
        carried: dict[str, Value] = dict(self.context)
        if self.request_tags:
            carried |= {f"aws:RequestTag/{key}": value for key, value in tags.items()} | {"aws:TagKeys": sorted(tags)}
        return [
            Request(
                self.action,
                arn,
                carried | ({f"aws:ResourceTag/{key}": value for key, value in tags.items()} if arn in self.tagged else {}),
            )
            for arn in self.on
        ]


@cache
def raw() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(TABLE.read_text())
    return loaded


def owners(section: str) -> dict[str, dict[str, Any]]:
    """The entries of a section (resource types, data sources, commands) by name; provider and backend are one."""
    entries = raw()[section]
    return {section: entries} if section in ("provider", "backend") else dict(entries)


def fill(text: str, known: Mapping[str, str]) -> str:
    """Every {{NAME}} replaced, names of the table's own `names` first (they are made of the policy's values)."""
    for _ in range(4):  # names refer to names at most three deep
        text = _PLACEHOLDER.sub(lambda m: known[m.group(1)] if m.group(1) in known else m.group(0), text)
    left = _PLACEHOLDER.findall(text)
    if left:
        raise ValueError(f"tests/support/deployer_calls.yaml: no value for {sorted(set(left))} in {text!r}")
    return text


def named(deployer: Deployer) -> dict[str, str]:
    """The names the project's code gives its resources, for the table's ARNs: of the configuration's first application
    (with a policy, with an image) and first colour, or a sample-app's when the configuration has none."""
    config = deployer.config
    apps = applications(config)
    first = apps[0] if apps else None
    with_policy = next((app.name for app in apps if app.config.policy), "sample-app")
    with_image = next((app for app in apps if app.config.image is not None), None)
    colour = next(iter(config.clusters))
    return {
        "APPLICATION": with_policy,
        "IMAGE_APPLICATION": with_image.name if with_image else "sample-app",
        "REPOSITORY_NAME": image_repository_name(config, with_image) if with_image else f"{config.project}/sample-app",
        "LOAD_BALANCER_NAME": load_balancer_name(config.project),
        "TARGET_GROUP_NAME": target_group_name(config.project, first.name if first else "sample-app", colour),
        "PUBLIC_HOST": public_hostname(config, first) if first else f"app.{config.dns.zone_name}",
        "PREVIEW_HOST": preview_hostname(config, first, colour) if first else f"app-{colour}.{config.dns.zone_name}",
        # Parameter ARNs name the parameter without its leading slash.
        "WEIGHTS_PARAMETER": weights_parameter(config.project).removeprefix("/"),
        "LOCK_PATH": lock_path(config.project).removeprefix("/"),
    }


def known_values(deployer: Deployer) -> dict[str, str]:
    return {**values(deployer), **raw()["names"], **named(deployer)}


def default_tags(deployer: Deployer) -> dict[str, str]:
    known = known_values(deployer)
    return {key: fill(str(value), known) for key, value in raw()["tags"].items()}


def calls(deployer: Deployer) -> list[Call]:
    """Every row of the table, filled for the deployer's project; rows of options it does not use left out."""
    known = known_values(deployer)
    used = {
        "build": deployer.builds_images,
        "s3": deployer.state_in_s3,
        "role": bool(deployer.role_arns),
        "waf": deployer.guards_with_waf,
    }
    found = []
    for section in SECTIONS:
        for owner, entry in owners(section).items():
            for row in entry["calls"]:
                call = _call(f"{section}.{owner}" if section != owner else section, entry, row, known)
                if call.only is None or used[call.only]:
                    found.append(call)
    return found


def _call(owner: str, entry: Mapping[str, Any], row: Mapping[str, Any], known: Mapping[str, str]) -> Call:
    on = _filled(row["arn"], known)
    tagged = on if row.get("tagged") is True else _filled(row.get("tagged", []), known)
    context = {
        key: fill(value, known) if isinstance(value, str) else tuple(_filled(value, known))
        for key, value in row.get("context", {}).items()
    }
    if row["when"] not in WHEN:  # a misspelt `when` would silently drop the row from the plan's calls
        raise ValueError(f"{owner}: when {row['when']!r} is none of {sorted(WHEN)}")
    return Call(
        owner=owner,
        when=row["when"],
        action=fill(row["call"], known),
        on=on,
        tagged=tagged,
        request_tags=bool(row.get("request_tags", False)),
        context=context,
        only=row.get("only"),
        source=str(row.get("source", entry["source"])),
    )


def _filled(value: str | list[str], known: Mapping[str, str]) -> tuple[str, ...]:
    return tuple(fill(item, known) for item in ([value] if isinstance(value, str) else value))


# A plan's calls in the call table: configuring the provider, reading the state and every data source, refreshing
# every resource (each type's `read` rows: the provider's Read function). Creates, updates, deletes, tags, the
# lock (`update` rows of the backend) and the commands are apply's and destroy's. The plan role's policy
# (policies/plan.json, policies/pipeline.py) must allow these and nothing more (tests/test_pipeline_identities.py).
PLAN_SECTIONS = ("provider", "backend", "resources", "data_sources")
PLAN_WHEN = "read"


def plan_calls(deployer: Deployer) -> list[Call]:
    """The rows of the call table a `terraform plan` of any stack makes, for the deployer's project."""
    return [c for c in calls(deployer) if c.owner.split(".")[0] in PLAN_SECTIONS and c.when == PLAN_WHEN]
