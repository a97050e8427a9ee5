"""Argo CD as it behaves over days, not only on the first sync: the App of Apps waits for children that are
still syncing, failed syncs are retried, and the load balancer controller's webhook certificate is not
rotated by every render (nor is any other child's live state kept over what Git says)."""

from __future__ import annotations

import copy
import functools
import re
import shutil
from pathlib import Path
from typing import Any

import lupa.lua51
import pytest

from model.platform import ARGO_CD, ARGOCD_NAMESPACE, CHILDREN
from tests.support.charts import CHARTS, Chain, build_chain, by_kind, release_applications, render
from tests.support.configs import EXAMPLE_COLOURS, SAMPLE_APPLICATIONS, example
from tests.support.synth import Synthesized

COLOURS = EXAMPLE_COLOURS
HEALTH_KEY = "resource.customizations.health.argoproj.io_Application"
LBC_CHILD = "aws-load-balancer-controller"
STAND_IN = Path(__file__).parent / "fixtures" / "lbc-webhook-certs"  # the chart's certificate logic, see its Chart.yaml


@pytest.fixture(scope="module")
def chains(example_app: Synthesized) -> dict[str, Chain]:
    return {colour: build_chain(example_app, colour) for colour in COLOURS}


# --- the Application health script, run as Argo CD runs it (Lua 5.1) ----------------------------


@functools.cache
def _health_script() -> str:
    """The script as argocd/apps renders argocd/apps/platform/argo-cd/values.yaml (a template over the facts) into the
    argo-cd child's values."""
    (argo_cd,) = [app for app in release_applications(example(), COLOURS[0]) if app["metadata"]["name"] == ARGO_CD.name]
    script: str = argo_cd["spec"]["source"]["helm"]["valuesObject"]["configs"]["cm"][HEALTH_KEY]
    return script


def application_health(obj: dict[str, Any]) -> dict[str, str]:
    """What Argo CD reports for a child Application: the script from argocd/apps/platform/argo-cd/values.yaml, with the
    child as the global `obj`, in a fresh Lua 5.1 runtime (Argo CD's gopher-lua is Lua 5.1)."""
    lua = lupa.lua51.LuaRuntime(unpack_returned_tuples=True)
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(_health_script())
    return {"status": result["status"], "message": result["message"]}


def child(
    health: str | None = None, sync: str | None = None, phase: str | None = None, message: str | None = None
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if health:
        status["health"] = {"status": health, **({"message": message} if message else {})}
    if sync:
        status["sync"] = {"status": sync}
    if phase:
        status["operationState"] = {"phase": phase}
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "x"},
        **({"status": status} if status else {}),
    }


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(child(), "Progressing", id="no status yet"),
        pytest.param(child(health="Progressing", sync="OutOfSync", phase="Running"), "Progressing", id="first sync"),
        pytest.param(child(health="Healthy", sync="Synced", phase="Succeeded"), "Healthy", id="healthy and synced"),
        pytest.param(child(health="Degraded", sync="Synced", phase="Succeeded"), "Degraded", id="degraded"),
        # An upgrade: still Healthy from before while the new sync runs; the next wave must wait.
        pytest.param(child(health="Healthy", sync="OutOfSync", phase="Running"), "Progressing", id="healthy, sync running"),
        # A failed upgrade: what ran before is still Healthy, but the sync failed; the next wave must not start.
        pytest.param(child(health="Healthy", sync="OutOfSync", phase="Failed"), "Degraded", id="healthy, last sync failed"),
        pytest.param(child(health="Healthy", sync="OutOfSync", phase="Error"), "Degraded", id="healthy, last sync errored"),
        pytest.param(child(health="Healthy", sync="OutOfSync", phase="Terminating"), "Progressing", id="sync terminating"),
    ],
)
def test_a_child_is_healthy_only_once_its_sync_has_finished(obj: dict[str, Any], expected: str) -> None:
    assert application_health(obj)["status"] == expected


def test_the_health_message_is_passed_on_and_says_when_a_sync_runs() -> None:
    assert application_health(child(health="Degraded", message="Deployment x exceeded its deadline")) == {
        "status": "Degraded",
        "message": "Deployment x exceeded its deadline",
    }
    assert application_health(child(health="Healthy", phase="Running"))["message"] == "sync operation running"
    failed = child(health="Healthy", phase="Failed")
    failed["status"]["operationState"]["message"] = "one or more objects failed to apply"
    assert application_health(failed) == {
        "status": "Degraded",
        "message": "last sync failed: one or more objects failed to apply",
    }


# --- retries ------------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", COLOURS)
def test_every_application_retries_a_failed_sync_with_backoff(chains: dict[str, Chain], colour: str) -> None:
    """The parent, the platform's children and each application's."""
    applications = [chains[colour].parent, *chains[colour].children.values()]
    assert len(applications) == 1 + len(CHILDREN) + len(SAMPLE_APPLICATIONS)
    for application in applications:
        retry = application["spec"]["syncPolicy"]["retry"]
        assert retry["limit"] > 0, application["metadata"]["name"]
        backoff = retry["backoff"]
        assert (backoff["factor"] > 1, _seconds(backoff["maxDuration"]) > _seconds(backoff["duration"])) == (True, True)


def _seconds(duration: str) -> int:
    match = re.fullmatch(r"(\d+)([sm])", duration)
    assert match, f"unexpected duration {duration!r}"
    return int(match.group(1)) * (60 if match.group(2) == "m" else 1)


# --- the load balancer controller's webhook certificate -----------------------------------------


def ignored(manifest: dict[str, Any], rules: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest without what the Application's ignoreDifferences ignore (as Argo CD compares it)."""
    kept = copy.deepcopy(manifest)
    group = manifest["apiVersion"].rpartition("/")[0]
    for rule in rules:
        if (rule.get("group", ""), rule["kind"], rule.get("name", manifest["metadata"]["name"])) != (
            group,
            manifest["kind"],
            manifest["metadata"]["name"],
        ):
            continue
        for pointer in rule.get("jsonPointers", []):
            *path, last = pointer.strip("/").split("/")
            parent = kept
            for part in path:
                parent = parent[part]
            parent.pop(last, None)
        for expression in rule.get("jqPathExpressions", []):
            _drop(kept, expression)
    return kept


def _drop(node: Any, expression: str) -> None:
    """Remove what a jq path of the form `.a.b[]?.c` selects (the only form this project writes)."""
    steps = re.findall(r"\.(\w+)(\[\]\??)?", expression)
    assert "".join(f".{key}{iterate}" for key, iterate in steps) == expression, f"unsupported jq path {expression}"
    targets = [node]
    for i, (key, iterate) in enumerate(steps):
        if i == len(steps) - 1:
            for target in targets:
                target.pop(key, None)
            return
        targets = [t[key] for t in targets if key in t]
        if iterate:
            targets = [item for t in targets for item in t]


@pytest.fixture(scope="module")
def lbc_child(chains: dict[str, Chain]) -> dict[str, Any]:
    return chains[COLOURS[0]].children[LBC_CHILD]


def renders_of_the_controller_chart(application: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The chart's certificate manifests, rendered twice as Argo CD renders the child: no cluster to `lookup`."""
    release, namespace = application["spec"]["source"]["helm"]["releaseName"], application["spec"]["destination"]["namespace"]
    first = render(STAND_IN, {}, release=release, namespace=namespace)
    return first, render(STAND_IN, {}, release=release, namespace=namespace)


def test_each_render_makes_a_new_webhook_certificate(lbc_child: dict[str, Any]) -> None:
    """Why the Application needs its ignoreDifferences: without them, every render is a change to apply."""
    first, second = renders_of_the_controller_chart(lbc_child)
    assert [doc["kind"] for doc in first] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Secret"]
    assert all(a != b for a, b in zip(first, second, strict=True))


def test_the_webhook_certificate_is_stable_under_argo_cd(lbc_child: dict[str, Any]) -> None:
    rules = lbc_child["spec"]["ignoreDifferences"]
    first, second = renders_of_the_controller_chart(lbc_child)
    assert [ignored(doc, rules) for doc in first] == [ignored(doc, rules) for doc in second]
    # ...and syncs keep the live certificate rather than applying the rendered one.
    assert "RespectIgnoreDifferences=true" in lbc_child["spec"]["syncPolicy"]["syncOptions"]


def test_only_the_certificate_is_ignored(lbc_child: dict[str, Any]) -> None:
    """The rest of the webhook configurations (rules, service, failure policy) is still compared."""
    first, _ = renders_of_the_controller_chart(lbc_child)
    kept = [ignored(doc, lbc_child["spec"]["ignoreDifferences"]) for doc in first]
    assert [hook["clientConfig"]["service"]["path"] for hook in kept[0]["webhooks"]] == ["/mutate-v1-pod", "/mutate-v1-service"]
    assert "caBundle" not in kept[1]["webhooks"][0]["clientConfig"]
    assert kept[2]["type"] == "kubernetes.io/tls"
    assert "data" not in kept[2]


@pytest.mark.parametrize("colour", COLOURS)
def test_other_children_ignore_nothing(chains: dict[str, Chain], colour: str) -> None:
    """The platform's other children and every application's: Argo CD compares all they render."""
    others = {name: app for name, app in chains[colour].children.items() if name != LBC_CHILD}
    assert sorted(others) == sorted([*(c.name for c in CHILDREN if c.name != LBC_CHILD), *SAMPLE_APPLICATIONS])
    assert [name for name, app in others.items() if "ignoreDifferences" in app["spec"]] == []
    assert [
        name
        for name, app in others.items()
        if "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"].get("syncOptions", [])
    ] == []


# --- every combination of a component entry's optional keys ------------------------------------

# The optional keys of a registry entry (model/platform.py Component) that change what argocd/apps writes for its child:
# Argo CD's ignoreDifferences (and the sync option that respects them), its namespace's labels (managedNamespaceMetadata),
# selfManaged (no resources finalizer) and a Pod Identity binding (its namespace then comes from the facts). Every entry
# takes its chart from a Helm repository (`chart` is required: the registry knows no other source), so the chart is
# the one key every combination has. The template once wrote RespectIgnoreDifferences after managedNamespaceMetadata's
# labels: YAML that does not parse, so no component could have both, and the whole parent failed with it.
OPTIONAL_KEYS = ("ignoreDifferences", "namespaceLabels", "selfManaged", "identity")
COMBINATIONS = [tuple(key for i, key in enumerate(OPTIONAL_KEYS) if mask & (1 << i)) for mask in range(1 << len(OPTIONAL_KEYS))]
BOUND_NAMESPACE = "bound-by-terraform"  # the facts' namespace of a component with an identity


def entry(keys: tuple[str, ...]) -> str:
    """A made-up component.yaml with exactly these optional keys."""
    lines = [
        "name: combo",
        "title: Combo",
        "namespace: combo",
        "wave: 0",
        "chart:",
        "  repository: https://charts.example.com",
        "  default: 1.0.0",
        "  releases:",
        '    - {version: 1.0.0, appVersion: v1.0.0, kubernetes: ["1.35"], evidence: a test\'s}',
    ]
    if "selfManaged" in keys:
        lines.append("selfManaged: true")
    if "identity" in keys:
        lines += ["identity:", "  serviceAccount: combo", "  policy: policy.json", "  description: a test's"]
    if "namespaceLabels" in keys:
        lines += ["namespaceLabels:", "  example.com/team: platform"]
    if "ignoreDifferences" in keys:
        lines += ["ignoreDifferences:", "  - kind: Secret", "    name: combo-tls", '    jsonPointers: ["/data"]']
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("keys", COMBINATIONS, ids=lambda keys: "+".join(keys) or "none")
def test_every_combination_of_a_components_optional_keys_renders_its_child(
    chains: dict[str, Chain], tmp_path: Path, keys: tuple[str, ...]
) -> None:
    """argocd/apps, copied with one more entry in its registry, renders valid YAML and the child says what the entry
    says: both sync options in one syncOptions list, the labels under managedNamespaceMetadata, the finalizer unless
    self-managed, the facts' namespace with an identity."""
    chart = tmp_path / "apps"
    shutil.copytree(CHARTS / "apps", chart)
    (chart / "platform" / "combo").mkdir()
    (chart / "platform" / "combo" / "component.yaml").write_text(entry(keys))
    (chart / "platform" / "combo" / "values.yaml").write_text("{}\n")
    facts = chains[COLOURS[0]].root_values
    values = {**facts, "platform": {**facts["platform"], "combo": "1.0.0"}}
    if "identity" in keys:
        values["identities"] = {**facts["identities"], "combo": {"namespace": BOUND_NAMESPACE, "serviceAccount": "combo"}}
    combo = by_kind(render(chart, values, release="apps", namespace=ARGOCD_NAMESPACE), "Application")["combo"]
    spec, policy = combo["spec"], combo["spec"]["syncPolicy"]
    ignoring = "ignoreDifferences" in keys
    assert policy["syncOptions"] == ["CreateNamespace=true", *(["RespectIgnoreDifferences=true"] if ignoring else [])]
    assert spec.get("ignoreDifferences") == (
        [{"kind": "Secret", "name": "combo-tls", "jsonPointers": ["/data"]}] if ignoring else None
    )
    labelled = "namespaceLabels" in keys
    assert policy.get("managedNamespaceMetadata") == ({"labels": {"example.com/team": "platform"}} if labelled else None)
    assert combo["metadata"].get("finalizers") == (None if "selfManaged" in keys else ["resources-finalizer.argocd.argoproj.io"])
    assert spec["destination"]["namespace"] == (BOUND_NAMESPACE if "identity" in keys else "combo")
    assert (spec["source"]["chart"], spec["source"]["targetRevision"]) == ("combo", "1.0.0")
    assert policy["retry"] == facts["syncRetry"]
    assert policy["automated"] == {"prune": True, "selfHeal": True}
