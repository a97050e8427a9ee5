"""Every EKS cluster the AWS emulator holds, each with a Kubernetes API and the controllers a colour runs, for commands
that run in processes of their own (`python -m tools.retire`, the destroy hook, `python -m tools.readiness`).

One HTTPS server serves every cluster under a path of its name, `<url>/<cluster name>/apis/...`, with a certificate
signed by a certificate authority of its own. The emulator answers every cluster with that endpoint and authority
(scripts/emulator.py `kube_api_settings`: start the emulator with `FakeClusters.emulator_settings()`), so the real
`KubeApi.for_eks` (tools/kube.py) reaches its cluster here, TLS checked, with an EKS token. Each cluster's objects are a
`FakeKubernetes` of their own (tests/support/fake_kubernetes.py: Applications and TargetGroupBindings; a deleted one
lingers a few readings, its finalizer at work, then goes).

Once `watch` connects them to the emulator and to what Terraform applied, each cluster's controllers act as a colour's
do, before every answer of the API and whenever a test calls `reconcile`:

- Argo CD syncs what Terraform installed: the App of Apps the colour's root release carries (its values as the apply
  resolved them: the colour's stand-in for the release, tests/support/emulated_colour.py), and the children that
  argocd/apps renders, from Git at the parent's revision (model/revisions.py `files_at`, as Argo CD reads it), each
  Application Synced and Healthy at its source's revision or chart version. It syncs again only when Terraform applies
  other values; what is deleted meanwhile (the teardown's work) stays deleted. A revision Git does not have leaves the
  parent alone with Argo CD's ComparisonError.
- The AWS Load Balancer Controller, for each TargetGroupBinding Argo CD creates: a pod of the application registered in
  the binding's target group (in the emulator, through boto3: moto reads a registered target as healthy), deregistered
  when the binding goes. Deleting an Application does not deregister anything by itself (its pods' endpoints are not
  modelled): the bindings' deletion does, as the teardown deletes them after the applications.

A cluster that leaves the emulator leaves the API with it (404 for every path, as for a cluster never made).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from model.bootstrap import MANIFESTS_CHART
from model.platform import ARGOCD_NAMESPACE, PARENT_APPLICATION, SYNC_WAVE_ANNOTATION
from model.revisions import RevisionError, files_at
from scripts.emulator import kube_api_settings
from tests.support.fake_kubernetes import FakeKubernetes, handler
from tools.kube import TARGET_GROUP_BINDINGS_IN
from tools.readiness.release import COMPARISON_ERROR

POD_PORT = 8080  # the port a pod is registered on (target type ip); nothing connects to it
# The readings a deleted object survives: one more than its deletion's, so a command that waits for it sees it there once
# (each of the teardown's waits then costs one POLL_SECONDS, tools/clock.py, instead of FakeKubernetes' two).
FINALIZER_POLLS = 2


@dataclass(frozen=True)
class Release:
    """What Terraform installed in a cluster: the root release's name, namespace and values (resolved)."""

    name: str
    namespace: str
    values: dict[str, Any]


class FakeClusters:
    def __init__(self, *, finalizer_polls: int = FINALIZER_POLLS) -> None:
        """finalizer_polls: the readings a deleted object survives (1: gone at the first reading after its deletion)."""
        from tests.support.tls import Authority

        self.finalizer_polls = finalizer_polls
        self.authority = Authority("fake EKS clusters")
        self.clusters: dict[str, FakeKubernetes] = {}
        self.registered: dict[str, list[tuple[str, str]]] = {}  # cluster -> (target group ARN, pod IP) registered now
        self.syncs: list[str] = []  # the clusters Argo CD synced, in order (one entry per sync)
        # What each cluster's API was asked to do and its finalizers did (FakeKubernetes.events), kept once it is gone.
        self.events: dict[str, list[str]] = {}
        self._synced: dict[str, Release] = {}
        self._pods = 0
        self._eks: Any = None  # clients on the emulator, made once (boto3 makes clients unsafely on threads)
        self._elbv2: Any = None
        self._released: Callable[[str], Release | None] = lambda _: None
        self._lock = threading.RLock()  # one reconcile at a time: the server answers on threads, tests call it too
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler(self._route))
        self.server.socket = self.authority.server_context(addresses=["127.0.0.1"]).wrap_socket(
            self.server.socket, server_side=True
        )
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    def emulator_settings(self) -> dict[str, str]:
        """The emulator's settings (MotoProcess) that aim every cluster's endpoint and authority here."""
        return kube_api_settings(self.url, self.authority.pem)

    def watch(self, aws: Callable[[str], Any], released: Callable[[str], Release | None]) -> None:
        """aws: a client on the emulator by service name; released: what Terraform installed in a cluster, by name
        (None: nothing yet). `released_in(state_dir)` reads it from the colours' local states."""
        with self._lock:
            self._eks, self._elbv2, self._released = aws("eks"), aws("elbv2"), released

    def cluster(self, name: str) -> FakeKubernetes:
        return self.clusters[name]

    def reconcile(self, only: str | None = None) -> None:
        """Each cluster's controllers catch up with the emulator and with what Terraform applied (only: one cluster's)."""
        with self._lock:
            if self._eks is None:
                return
            held = set(self._eks.list_clusters()["clusters"])
            for gone in set(self.clusters) - held:
                del self.clusters[gone]
                self._synced.pop(gone, None)
                self.registered.pop(gone, None)
            for name in sorted(held if only is None else held & {only}):
                release = self._released(name)
                if release is not None and self._synced.get(name) != release:
                    if name not in self.clusters:
                        self.clusters[name] = FakeKubernetes(serve=False, finalizer_polls=self.finalizer_polls)
                        self.clusters[name].events = self.events.setdefault(name, [])
                    self._sync(name, self.clusters[name], release)
                    self._synced[name] = release
                    self.syncs.append(name)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _route(self, path: str) -> tuple[FakeKubernetes, str] | None:
        name, _, rest = path.lstrip("/").partition("/")
        self.reconcile(name)
        cluster = self.clusters.get(name)
        return (cluster, f"/{rest}") if cluster is not None else None

    # --- Argo CD ---------------------------------------------------------------------------------------------------

    def _sync(self, name: str, cluster: FakeKubernetes, release: Release) -> None:
        from tests.support.charts import render  # Helm's engine, loaded once a cluster has something to render

        (parent,) = [
            doc
            for doc in render(MANIFESTS_CHART, release.values, release=release.name, namespace=release.namespace)
            if doc["kind"] == "Application"
        ]
        source = parent["spec"]["source"]
        try:
            chart = files_at(source["targetRevision"], source["path"], key=f"{PARENT_APPLICATION} targetRevision")
        except RevisionError as err:
            # Argo CD's "Failed to load target state" (argo-cd controller/state.go at v3.5.1): nothing of it synced.
            condition = {"type": COMPARISON_ERROR, "message": f"Failed to load target state: {err}"}
            cluster.add_application(PARENT_APPLICATION, sync="Unknown", source=source, conditions=[condition])
            return
        children = render(chart, source["helm"]["valuesObject"], release=PARENT_APPLICATION, namespace=ARGOCD_NAMESPACE)
        rendered = [parent, *children]
        applications = {doc["metadata"]["name"]: doc for doc in rendered if doc["kind"] == "Application"}
        for gone in set(cluster.application_names()) - set(applications):  # automated sync prunes
            cluster.remove_application(gone)
        for app_name, app in applications.items():
            metadata = app["metadata"]
            cluster.add_application(
                app_name,
                wave=(metadata.get("annotations") or {}).get(SYNC_WAVE_ANNOTATION),
                finalizers=metadata.get("finalizers", []),
                source=app["spec"]["source"],
            )
        bindings = {_binding_path(doc): doc for doc in rendered if doc["kind"] == "TargetGroupBinding"}
        for path in set(_bindings(cluster)) - set(bindings):
            cluster.answer("DELETE", path, {"propagationPolicy": "Foreground"})
        for path, binding in bindings.items():
            if path not in cluster.objects:
                self._bind(name, cluster, path, binding)

    # --- the AWS Load Balancer Controller --------------------------------------------------------------------------

    def _bind(self, name: str, cluster: FakeKubernetes, path: str, binding: dict[str, Any]) -> None:
        """A new TargetGroupBinding: a pod of its Service registered in its target group, deregistered when it goes."""
        elbv2 = self._elbv2
        group = binding["spec"]["targetGroupARN"]
        self._pods += 1
        pod = f"10.0.{96 + self._pods // 250}.{4 + self._pods % 250}"  # in the example's first private subnet
        target = [{"Id": pod, "Port": POD_PORT}]
        elbv2.register_targets(TargetGroupArn=group, Targets=target)
        self.registered.setdefault(name, []).append((group, pod))
        cluster.objects[path] = {"metadata": binding["metadata"], "spec": binding["spec"]}
        # Its Service's pod, which the controller's webhook gave the binding's readiness gate (tools/readiness/gates.py).
        metadata = binding["metadata"]
        cluster.serves(metadata["namespace"], metadata["name"], binding["spec"]["serviceRef"]["name"])

        def deregistered() -> None:
            elbv2.deregister_targets(TargetGroupArn=group, Targets=target)
            self.registered[name].remove((group, pod))

        cluster.on_gone[path] = deregistered


def _binding_path(binding: dict[str, Any]) -> str:
    metadata = binding["metadata"]
    return f"{TARGET_GROUP_BINDINGS_IN.format(namespace=metadata['namespace'])}/{metadata['name']}"


def _bindings(cluster: FakeKubernetes) -> Iterator[str]:
    return (path for path in list(cluster.objects) if "/targetgroupbindings/" in path)


def released_in(state_dir: Path) -> Callable[[str], Release | None]:
    """What Terraform installed in each cluster, as the colours' local states hold it: the root release's stand-in
    (tests/support/emulated_colour.py) of the state whose stand-in names the cluster."""
    from tests.support.emulated_colour import RELEASE_STAND_IN

    def released(cluster: str) -> Release | None:
        for state in sorted(state_dir.glob("*.tfstate")):
            try:
                held = json.loads(state.read_text() or "{}")
            except ValueError:
                continue  # Terraform is writing it: the next reading has it whole
            for resource in held.get("resources", []):
                if resource["type"] != "terraform_data" or resource["name"] != RELEASE_STAND_IN:
                    continue
                for instance in resource["instances"]:
                    given = instance["attributes"]["input"]["value"]
                    if given["cluster"] == cluster:
                        (values,) = given["values"]
                        return Release(given["name"], given["namespace"], json.loads(values))
        return None

    return released
