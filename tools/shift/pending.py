"""What a colour's Terraform plan would change, and whether a shift step may apply it: weights only.

Pure: it reads the document `terraform show -json <plan file>` prints and nothing else. A shift step
writes new weights into the config and applies the colour's plan; whatever else that plan holds (a
release bump, an edited setting, drift) would land on a serving colour in the middle of a shift, with
no window judging it on its own. So a step may apply only:

- `helm_release` updates whose `values` differ only in leaves at `...ingress.weight` (the facts the
  App of Apps, or the sample app delivered by Helm, hands to the Ingress: model/values.py), with the
  `metadata` the provider then recomputes;
- `terraform_data` updates whose `input` differs only in `weight` (the colour's teardown hook carries
  the weight it was deployed with: components/destroy_hook.py), with the `output` that mirrors it;
- no-ops and reads.

Anything else (a create, a delete, a replacement, a move, any other attribute) is named as
`<address>: <attribute path>`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

# Where the weight lives inside a helm_release's values (ingress.weight of the facts) and a terraform_data's input.
WEIGHT_LEAF = ("ingress", "weight")
# The attribute that carries the weight, per resource type, and what the provider recomputes when it changes:
# the helm provider marks `metadata` unknown whenever `values` change (its ModifyPlan, recomputeMetadata), and
# terraform_data's `output` is its `input`, unknown until applied.
WEIGHTED: Mapping[str, tuple[str, frozenset[str]]] = {
    "helm_release": ("values", frozenset({"metadata"})),
    "terraform_data": ("input", frozenset({"output"})),
}
# Actions that change nothing a shift could notice (a data source read is no change to the colour).
HARMLESS_ACTIONS = ({"no-op"}, {"read"})

KeyPath = tuple[str | int, ...]  # a path into a resource's attributes: keys and list indexes


@dataclass(frozen=True)
class Change:
    """One thing a plan would change: a resource's address and the attribute (a path into it) or action."""

    address: str
    attribute: str
    weight_only: bool  # a weight a shift step may apply

    def line(self) -> str:
        return f"{self.address}: {self.attribute}"


def changes(document: Mapping[str, Any]) -> list[Change]:
    """Everything the plan would change, one entry per differing attribute (inside `values`, per leaf)."""
    return [change for resource in document.get("resource_changes") or [] for change in _resource(resource)]


def refusals(document: Mapping[str, Any]) -> list[Change]:
    """What a shift step may not apply: every change that is not a weight."""
    return [change for change in changes(document) if not change.weight_only]


def _resource(resource: Mapping[str, Any]) -> Iterator[Change]:
    address = str(resource.get("address", "?"))
    if resource.get("deposed"):
        address = f"{address} (deposed object {resource['deposed']})"
    change = resource.get("change") or {}
    actions = set(change.get("actions") or [])
    previous = resource.get("previous_address")
    if previous and previous != resource.get("address"):
        # Moving a resource in the state is a change of its own, deployed on its own.
        yield Change(address, f"(moved from {previous})", weight_only=False)
    if actions in HARMLESS_ACTIONS:
        return
    if actions != {"update"}:
        yield from _whole(address, change, actions)
        return
    differing = _differences(change.get("before"), change.get("after"), change.get("after_unknown"), ())
    found = list(_update(address, str(resource.get("type", "")), change, differing))
    # An update that shows no attribute (a sensitivity or private-state change) is still something applied.
    yield from found or [Change(address, "(updated; no attribute shown)", weight_only=False)]


def _update(address: str, kind: str, change: Mapping[str, Any], differing: list[KeyPath]) -> Iterator[Change]:
    carrier, derived = WEIGHTED.get(kind, ("", frozenset[str]()))
    leaves: list[KeyPath] = []
    recomputed: list[KeyPath] = []
    for path in differing:
        if path[0] == carrier == "values":
            leaves.extend(_values_leaves(change.get("before"), change.get("after"), path))
        elif path[0] in derived:
            recomputed.append(path)
        else:
            leaves.append(path)
    found = [Change(address, _describe(leaf), weight_only=_is_weight(carrier, leaf)) for leaf in leaves]
    yield from found
    # What the provider recomputes from the changed attributes is no change of its own; alone it is named.
    if not found:
        yield from (Change(address, _describe(path), weight_only=False) for path in recomputed)


def _is_weight(carrier: str, leaf: KeyPath) -> bool:
    if carrier == "values":  # helm_release: a leaf at ...ingress.weight inside one of the values documents
        return len(leaf) > 2 and leaf[0] == "values" and leaf[-len(WEIGHT_LEAF) :] == WEIGHT_LEAF
    return bool(carrier) and leaf == (carrier, "weight")


def _whole(address: str, change: Mapping[str, Any], actions: set[str]) -> Iterator[Change]:
    """A change to the resource as a whole: created, destroyed, replaced (naming what forces it), forgotten."""
    if actions == {"delete", "create"}:  # either order: create-before-destroy or not
        forcing = [_describe(tuple(path)) for path in change.get("replace_paths") or []]
        for attribute in forcing or ["(replaced)"]:
            yield Change(address, f"{attribute} (forces replacement)" if forcing else attribute, weight_only=False)
        return
    word = {"create": "(created)", "delete": "(destroyed)", "forget": "(removed from the state)"}
    for action in sorted(actions):
        yield Change(address, word.get(action, f"({action})"), weight_only=False)


def _differences(before: Any, after: Any, unknown: Any, path: KeyPath) -> list[KeyPath]:
    """Paths of the leaves that differ between before and after; a value known only after apply differs."""
    if unknown is True:
        return [path]
    if isinstance(before, dict) and isinstance(after, dict):
        unknowns = unknown if isinstance(unknown, dict) else {}
        keys = sorted(before.keys() | after.keys() | unknowns.keys())
        return [p for key in keys for p in _differences(before.get(key), after.get(key), unknowns.get(key), (*path, key))]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        unknowns_list = unknown if isinstance(unknown, list) and len(unknown) == len(after) else [None] * len(after)
        return [
            p
            for i, (b, a, u) in enumerate(zip(before, after, unknowns_list, strict=True))
            for p in _differences(b, a, u, (*path, i))
        ]
    if isinstance(unknown, (dict, list)) and _any_unknown(unknown):
        return [path]
    return [] if before == after else [path]


def _any_unknown(unknown: Any) -> bool:
    if isinstance(unknown, dict):
        return any(_any_unknown(value) for value in unknown.values())
    if isinstance(unknown, list):
        return any(_any_unknown(value) for value in unknown)
    return unknown is True


def _values_leaves(before: Any, after: Any, path: KeyPath) -> list[KeyPath]:
    """The leaves that differ inside a helm_release's `values` (path: where `values` differs): each entry of
    `values` is a YAML (or JSON) document, compared key by key."""
    old, new = (before or {}).get("values"), (after or {}).get("values")
    if not (len(path) == 2 and isinstance(old, list) and isinstance(new, list) and len(old) == len(new)):
        return [path]  # entries added, removed or known only after apply: not a weight
    index = path[1]
    if not (isinstance(index, int) and isinstance(old[index], str) and isinstance(new[index], str)):
        return [path]
    try:
        documents = yaml.safe_load(old[index]), yaml.safe_load(new[index])
    except yaml.YAMLError:
        return [path]  # not a document we can read: the whole entry differs
    return _differences(documents[0], documents[1], None, path)


def _describe(path: KeyPath) -> str:
    """`values[0].ingress.weight`; a key with a dot or a space is quoted: `annotations["a.b/c"]`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.replace("-", "").replace("_", "").isalnum():
            text += f".{part}" if text else part
        else:
            text += f'["{part}"]'
    return text
