"""What a shift step may apply (tools/shift/pending.py), judged on plans built from the example's synthesized blue
stack: its helm_release values and teardown hook input as `terraform show -json` carries them, before and after."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from tools.shift.pending import changes, refusals

from tests.support.synth import Synthesized

# What Terraform's state holds beside the configured arguments, or does not show in a plan's values.
NOT_ATTRIBUTES = ("//", "depends_on", "lifecycle", "provisioner", "provider")
Edit = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def stack(example_app: Synthesized) -> dict[str, Any]:
    return example_app.json("blue")


def attributes(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in NOT_ATTRIBUTES}


def facts_at(node: Any, path: tuple[str | int, ...] = ()) -> tuple[str | int, ...] | None:
    """Where in a values document the facts are: the mapping whose `ingress` holds the weight."""
    if isinstance(node, dict):
        if "weight" in (node.get("ingress") or {}):
            return path
        children: list[tuple[str | int, Any]] = list(node.items())
    elif isinstance(node, list):
        children = list(enumerate(node))
    else:
        return None
    for key, child in children:
        found = facts_at(child, (*path, key))
        if found is not None:
            return found
    return None


def facts_of(document: Any) -> dict[str, Any] | None:
    path = facts_at(document)
    if path is None:
        return None
    for key in path:
        document = document[key]
    facts: dict[str, Any] = document  # the very mapping, edited in place
    return facts


def weighted_release(stack: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The helm_release whose values carry ingress.weight (the App of Apps), by its Terraform address."""
    found = [
        (f"helm_release.{name}", attributes(body))
        for name, body in stack["resource"]["helm_release"].items()
        if any(facts_at(yaml.safe_load(document)) is not None for document in body.get("values", []))
    ]
    assert len(found) == 1, found
    return found[0]


def in_facts(stack: dict[str, Any], leaf: str) -> str:
    """`<address>: values[i]<where the facts are>.<leaf>`, as a refusal names it."""
    address, release = weighted_release(stack)
    for index, document in enumerate(release["values"]):
        path = facts_at(yaml.safe_load(document))
        if path is not None:
            where = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)
            return f"{address}: values[{index}]{where}.{leaf}"
    raise AssertionError("no facts in the values")


def teardown_hook(stack: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    hooks = stack["resource"]["terraform_data"].items()
    ((name, body),) = [(n, b) for n, b in hooks if b["//"]["metadata"]["path"].endswith("/teardown/hook")]
    return f"terraform_data.{name}", {"id": "6f1c", "input": body["input"], "output": body["input"]}


def edited_values(release: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The release with its values documents parsed, edited and written back as the stack writes them (JSON)."""
    after = copy.deepcopy(release)
    documents = [yaml.safe_load(document) for document in after["values"]]
    for document in documents:
        facts = facts_of(document)
        if facts is not None:
            edit(facts)
    after["values"] = [json.dumps(document, indent=2) for document in documents]
    return after


def update(address: str, before: Any, after: Any, unknown: dict[str, Any]) -> dict[str, Any]:
    kind, name = address.split(".", 1)
    change = {"actions": ["update"], "before": before, "after": after, "after_unknown": unknown}
    return {"address": address, "mode": "managed", "type": kind, "name": name, "change": change}


def plan(*resource_changes: dict[str, Any]) -> dict[str, Any]:
    return {"format_version": "1.2", "terraform_version": "1.14.0", "resource_changes": list(resource_changes)}


def set_weight(weight: int) -> Edit:
    def edit(document: dict[str, Any]) -> None:
        document["ingress"]["weight"] = weight

    return edit


def weight_step(stack: dict[str, Any], edit: Edit, *, input_edit: Edit | None = None) -> dict[str, Any]:
    """The blue stack's plan when its values are edited: the release (metadata recomputed, as the helm provider
    does) and the teardown hook (output unknown until applied, as terraform_data does)."""
    release_address, release = weighted_release(stack)
    hook_address, hook = teardown_hook(stack)
    hook_after = copy.deepcopy(hook)
    hook_after["input"]["weight"] = 60
    if input_edit is not None:
        input_edit(hook_after["input"])
    hook_after["output"] = None
    return plan(
        update(release_address, {**release, "metadata": {"revision": 3}}, edited_values(release, edit), {"metadata": True}),
        update(hook_address, hook, hook_after, {"output": True}),
    )


def lines(found: list[Any]) -> list[str]:
    return [change.line() for change in found]


def test_a_plan_that_changes_only_the_weight_is_allowed_and_names_it(stack: dict[str, Any]) -> None:
    document = weight_step(stack, set_weight(60))
    assert refusals(document) == []
    assert lines(changes(document)) == [
        in_facts(stack, "ingress.weight"),
        f"{teardown_hook(stack)[0]}: input.weight",
    ]


def test_another_key_in_the_values_is_refused_by_name_beside_the_weight(stack: dict[str, Any]) -> None:
    def bump(document: dict[str, Any]) -> None:
        document["ingress"]["weight"] = 60
        document["sampleApp"]["image"]["tag"] = "0.2.0"

    document = weight_step(stack, bump)
    assert lines(refusals(document)) == [in_facts(stack, "sampleApp.image.tag")]


def test_a_key_added_to_the_values_is_refused_with_a_quoted_name(stack: dict[str, Any]) -> None:
    def annotate(document: dict[str, Any]) -> None:
        document["ingress"]["alb.ingress.kubernetes.io/ssl-policy"] = "ELBSecurityPolicy-TLS13-1-2-2021-06"

    assert lines(refusals(weight_step(stack, annotate))) == [in_facts(stack, 'ingress["alb.ingress.kubernetes.io/ssl-policy"]')]


def test_another_attribute_of_the_release_is_refused(stack: dict[str, Any]) -> None:
    address, release = weighted_release(stack)
    after = {**edited_values(release, set_weight(60)), "chart": "./other-chart"}
    document = plan(update(address, release, after, {"metadata": True}))
    assert lines(refusals(document)) == [f"{address}: chart"]


def test_another_key_of_the_teardown_hooks_input_is_refused(stack: dict[str, Any]) -> None:
    def longer(hook_input: dict[str, Any]) -> None:
        hook_input["timeout_seconds"] = 9999

    assert lines(refusals(weight_step(stack, set_weight(60), input_edit=longer))) == [
        f"{teardown_hook(stack)[0]}: input.timeout_seconds"
    ]


def test_values_known_only_after_apply_are_not_taken_for_a_weight(stack: dict[str, Any]) -> None:
    """A value Terraform cannot show (it reads an output not yet known) could hold anything."""
    address, release = weighted_release(stack)
    after = {**release, "values": [None]}
    document = plan(update(address, release, after, {"values": [True], "metadata": True}))
    assert lines(refusals(document)) == [f"{address}: values[0]"]


def test_metadata_recomputed_with_nothing_else_changing_is_refused(stack: dict[str, Any]) -> None:
    address, release = weighted_release(stack)
    document = plan(update(address, release, release, {"metadata": True}))
    assert lines(refusals(document)) == [f"{address}: metadata"]


def test_creates_deletes_and_replacements_are_refused_naming_what_forces_them(stack: dict[str, Any]) -> None:
    (cluster,) = stack["resource"]["aws_eks_cluster"]
    (argocd,) = [name for name in stack["resource"]["helm_release"] if name.startswith("argocd")]
    body = attributes(stack["resource"]["aws_eks_cluster"][cluster])

    def whole(address: str, actions: list[str], **extra: Any) -> dict[str, Any]:
        kind, name = address.split(".", 1)
        return {"address": address, "type": kind, "name": name, "change": {"actions": actions, **extra}}

    document = plan(
        whole(f"aws_eks_cluster.{cluster}", ["delete", "create"], before=body, after=body, replace_paths=[["version"]]),
        whole(f"helm_release.{argocd}", ["create"], before=None, after={}),
        whole("terraform_data.old", ["delete"], before={}, after=None),
        whole("data.aws_eks_cluster_auth.auth", ["read"]),
        whole(f"helm_release.{argocd}", ["no-op"]),
    )
    assert lines(refusals(document)) == [
        f"aws_eks_cluster.{cluster}: version (forces replacement)",
        f"helm_release.{argocd}: (created)",
        "terraform_data.old: (destroyed)",
    ]


def test_a_plan_with_nothing_to_do_has_no_changes() -> None:
    assert changes(plan()) == []
    assert changes({"format_version": "1.2"}) == []  # Terraform leaves resource_changes out of an empty plan
