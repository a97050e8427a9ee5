"""The shared load balancer's names and tags: the traffic stack creates by them, the operator commands find by them.

One target group per application and colour, one listener rule per public host (a weighted forward across the
colours' target groups) and one per preview host (one colour's target group). The commands never read Terraform
state to find them: the tags below say which application and colour each one serves.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping

# The stack that owns the shared load balancer, its routes and the live weights (a colour may not take the name).
TRAFFIC_STACK = "traffic"
# The construct ids the traffic stack gives its own parts, beside one per application (its name: stacks/traffic.py):
# an application may not take one of them (model/config/), or the stack could not be built. Reserved rather than the
# applications' ids moved under a scope of their own: that would move every existing application's target groups,
# rules and records to new addresses, which Terraform replaces.
TRAFFIC_CONSTRUCT_IDS = frozenset(
    {
        "aws",  # the provider, and the backend (stacks/base.py)
        "backend",
        "common",  # common's outputs
        "load-balancer",
        "weights",
        "live-target-groups",
        "configured-colours",
        "deletion-guard",
        "account",  # the web ACL's, when traffic.waf is on
        "partition",
        "waf-logs-key",
        "web-acl",
        "shift-events",  # the shift's events topic (components/shift_events.py)
        "shift-record",  # the shift's record, a log group (components/shift_record.py)
    }
)
# Tags on the target groups and listener rules (beside the default `Project` and `Stack` tags).
APPLICATION_TAG = "Application"
COLOUR_TAG = "Colour"
ROUTE_TAG = "Route"  # on a listener rule: PUBLIC (weighted across colours) or PREVIEW (one colour)
# On a target group: what AWS cannot change in place, `<protocol>:<port>:<target type>` (target_group_shape): read back at
# plan to refuse replacing a group that carries traffic (components/live_target_groups.py).
SHAPE_TAG = "TargetGroupShape"
PUBLIC, PREVIEW = "public", "preview"
# The shared load balancer's answer (404, text/plain) to a request no rule takes: a host nobody configured, or a preview
# host asked from outside its networks (model/preview_access.py). Readiness recognises it by this text.
NOT_FOUND = "no application answers at this host"
# The records of the public and preview hosts are weighted members with this set identifier. They were made so to stand
# beside the weighted records colours wrote before this design (#30); Route53 answers a lone weighted member at any
# weight, and a record's routing policy cannot change in place (a new one replaces it, a moment with no answer for the
# host), so they stay weighted (`traffic.record_weight`).
SET_IDENTIFIER = "shared-load-balancer"
# Listener rule priorities: 1-50000 (Elastic Load Balancing, CreateRule); the hosts do not overlap, so any distinct
# numbers do. Each is derived from its host name, so adding or removing an application moves no other rule.
_PRIORITIES = 50000
_NAME_LIMIT = 32  # target group and load balancer names (Elastic Load Balancing, CreateTargetGroup)


def target_group_shape(protocol: str, port: int, target_type: str) -> str:
    return f"{protocol}:{port}:{target_type}"


def output_key(name: str) -> str:
    """A colour's or an application's key in the traffic stack's `target_groups` output: an identifier, so a colour
    reads its own as `target_groups.<colour>.<application>`, a reference without quotes (colours and applications are
    DNS labels: `-` becomes `_`, and no two of them meet)."""
    return name.replace("-", "_")


def load_balancer_name(project: str) -> str:
    """At most 28 characters: the project name has at most 20."""
    return f"{project}-traffic"


def target_group_name(project: str, application: str, colour: str) -> str:
    """Stable (a new name replaces the group) and within 32 characters: shortened with a digest when too long."""
    name = f"{project}-{application}-{colour}"
    if len(name) <= _NAME_LIMIT:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: _NAME_LIMIT - 9].rstrip('-')}-{digest}"


# The weights parameter's description, written by Terraform when it makes it and by every shift with the value: an
# overwrite that left it out could change it, and a deploy would then plan an update of the parameter.
WEIGHTS_DESCRIPTION = "Live traffic weights by application and colour; written by python -m tools.shift only"
# The weights parameter's value (tools/live_weights.py says why it is shaped so): each colour's weight at the top, as
# every guard reads it, beside these two keys. Neither can be a colour: a colour has no `_` (COLOUR_PATTERN), so a key
# with one is never a colour's (NOT_A_COLOUR), which is how Terraform tells them apart (components/traffic_weights.py).
WEIGHTS_SCHEMA = 2
WEIGHTS_SCHEMA_KEY = "_schema"
BY_APPLICATION = "by_application"
NOT_A_COLOUR = "_"


def weights_value(colours: Mapping[str, int], applications: Mapping[str, Mapping[str, int]]) -> str:
    """The weights parameter's value: each colour's weight (the most any application gives it) and each application's
    split, `_schema` first (sorted keys)."""
    document: dict[str, object] = {WEIGHTS_SCHEMA_KEY: WEIGHTS_SCHEMA, **colours, BY_APPLICATION: applications}
    return json.dumps(document, sort_keys=True)


def weights_parameter(project: str) -> str:
    """The SSM parameter holding the live weights (the one source of truth, written by the shift only)."""
    return f"/{project}/traffic/weights"


# The traffic stack's destroy-time hook of a target group (tools/detach.py) reads its input in this variable.
DETACH_ENV = "TARGET_GROUP_DETACH"


def events_topic_name(project: str) -> str:
    """The SNS topic the shift tells each start, step, verdict, roll-back, drain and end (docs/shift-events.md): the
    traffic stack creates it by this name and `python -m tools.shift` finds it by it."""
    return f"{project}-shift-events"


def shift_record_log_group(project: str) -> str:
    """The CloudWatch Logs group holding every shift's and drain's events, one log stream per run named by its shift id
    (docs/shift-record.md): the traffic stack creates it by this name, `python -m tools.shift` writes and reads it."""
    return f"/{project}/traffic/shifts"


# How long the record keeps a run: two years (one of CloudWatch Logs' allowed retentions, PutRetentionPolicy), so last
# year's upgrade can be compared with this year's; a run is a few kilobytes.
SHIFT_RECORD_RETENTION_DAYS = 731


def lock_path(project: str) -> str:
    """The SSM path under which each taking of the traffic lock is a numbered parameter, created only if absent: one
    holder at a time (tools/traffic_lock.py)."""
    return f"/{project}/traffic/locks"


def rule_priorities(hosts: Iterable[str]) -> dict[str, int]:
    """A distinct priority per host: its digest's place, or the next free one when two hosts meet (in sorted order,
    so the same hosts always get the same numbers)."""
    taken: set[int] = set()
    found = {}
    for host in sorted(hosts):
        priority = 1 + int(hashlib.sha256(host.encode()).hexdigest()[:8], 16) % _PRIORITIES
        while priority in taken:
            priority = priority % _PRIORITIES + 1
        taken.add(priority)
        found[host] = priority
    return found
