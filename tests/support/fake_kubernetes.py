"""A Kubernetes API that serves Argo CD Applications and the load balancer controller's TargetGroupBindings on the
REST paths the operator commands use (tools/kube.py), over HTTP on a loopback port: the teardown deletes through it, the
shift's readiness check lists through it.

A deleted object lingers for a few readings (its finalizer at work), then disappears and runs its
`on_gone` hook: what the controllers would have done meanwhile. A hook is found by the object's path, else by its name.

One cluster's objects can also be served by a server of another (tests/support/fake_clusters.py: every cluster behind
one HTTPS server): `FakeKubernetes(serve=False)`, and that server's handler is `handler(...)` too."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from model.platform import RESOURCES_FINALIZER, SYNC_WAVE_ANNOTATION
from tools.kube import (
    APPLICATIONS,
    CLAIMS_IN,
    PODS_IN,
    SERVICE_IN,
    TARGET_GROUP_BINDINGS,
    TARGET_GROUP_BINDINGS_IN,
    VOLUMES,
    KubeApi,
)
from tools.readiness.gates import gate_of

FINALIZER_POLLS = 3  # readings a deleted object survives while its finalizer runs


class FakeKubernetes:
    """Argo CD Applications and TargetGroupBindings behind the Kubernetes REST paths of tools/kube.py."""

    def __init__(self, *, serve: bool = True, finalizer_polls: int = FINALIZER_POLLS) -> None:
        """serve: on a loopback port of its own (`url`); False: behind another's server, which calls `answer`.
        finalizer_polls: the readings a deleted object survives."""
        self.finalizer_polls = finalizer_polls
        self.objects: dict[str, dict[str, Any]] = {}
        self.deleting: dict[str, int] = {}
        self.on_gone: dict[str, Callable[[], None]] = {}
        self.on_delete: dict[str, Callable[[], None]] = {}
        self.events: list[str] = []
        self.tokens: set[str] = set()
        self.volume_of: dict[str, str] = {}  # a claim's path -> the path of the volume the driver deletes after it
        self.requests: list[tuple[str, str]] = []  # (HTTP method, path with its query) of every request, in order
        if serve:
            self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler(lambda path: (self, path)))
            # A short poll: shutdown() waits for the loop's next poll (0.5 s by default), once per test.
            threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add_application(
        self,
        name: str,
        *,
        wave: int | str | None = None,
        finalizers: list[str] | None = None,
        sync: str = "Synced",
        health: str = "Healthy",
        source: dict[str, Any] | None = None,
        phase: str | None = None,
        conditions: list[dict[str, Any]] | None = None,
    ) -> None:
        """An Application as argocd/apps renders a child: deleting it deletes what it installed (the resources
        finalizer) unless `finalizers` says otherwise. wave: its sync-wave annotation (a string, as Kubernetes
        keeps it; a str is written as is, malformed or not); None: no annotation. source: its spec.source (what it
        installs, at which targetRevision); phase: its last sync operation's; conditions: its status.conditions."""
        metadata: dict[str, Any] = {"name": name, "finalizers": [RESOURCES_FINALIZER] if finalizers is None else finalizers}
        if wave is not None:
            metadata["annotations"] = {SYNC_WAVE_ANNOTATION: str(wave)}
        status: dict[str, Any] = {"sync": {"status": sync}, "health": {"status": health}}
        if source and "chart" in source:  # what Argo CD reports as synced: the chart version, for a Helm repository
            status["sync"]["revision"] = source["targetRevision"]
        if phase:
            status["operationState"] = {"phase": phase, "message": f"sync {phase.lower()}"}
        if conditions:
            status["conditions"] = conditions
        self.objects[self._application_path(name)] = {
            "metadata": metadata,
            "spec": {"syncPolicy": {"automated": {"prune": True}}, **({"source": source} if source else {})},
            "status": status,
        }

    def runs(self, applications: list[dict[str, Any]]) -> None:
        """Exactly these Applications (as rendered: the parent and argocd/apps' children), each Synced and Healthy."""
        for name in self.application_names():
            self.remove_application(name)
        for app in applications:
            metadata = app["metadata"]
            wave = (metadata.get("annotations") or {}).get(SYNC_WAVE_ANNOTATION)
            self.add_application(
                metadata["name"], wave=wave, finalizers=metadata.get("finalizers", []), source=app["spec"]["source"]
            )
            facts = ((app["spec"]["source"].get("helm") or {}).get("valuesObject") or {}).get("blueGreen")
            if facts:  # an application: its Service and a pod, which the controller's webhook gave its gate
                self.serves(app["spec"]["destination"]["namespace"], metadata["name"], facts["service"]["name"])

    def serves(self, namespace: str, binding: str, service: str, *, gated: bool = True) -> None:
        """An application's Service and one pod it selects, carrying the binding's target-health readiness gate (as the
        load balancer controller's webhook injects it) unless not `gated`."""
        selector = {"app.kubernetes.io/instance": binding}
        self.objects[SERVICE_IN.format(namespace=namespace, name=service)] = {
            "metadata": {"name": service, "namespace": namespace},
            "spec": {"selector": selector},
        }
        self.add_pod(namespace, f"{binding}-0", labels=selector, gates=[gate_of(binding)] if gated else [])

    def add_pod(self, namespace: str, name: str, *, labels: dict[str, str], gates: list[str]) -> None:
        self.objects[f"{PODS_IN.format(namespace=namespace)}/{name}"] = {
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"readinessGates": [{"conditionType": gate} for gate in gates]},
            "status": {"phase": "Running"},
        }

    def application_source(self, name: str) -> dict[str, Any]:
        found = self.application(name)
        assert found is not None, name
        source: dict[str, Any] = found["spec"]["source"]
        return source

    def remove_application(self, name: str) -> None:
        """The cluster does not run it (a colour following a revision without it)."""
        del self.objects[self._application_path(name)]

    def application_names(self) -> list[str]:
        prefix = self._application_path("")
        return [path.removeprefix(prefix) for path in self.objects if path.startswith(prefix)]

    @staticmethod
    def _application_path(name: str) -> str:
        return f"{APPLICATIONS.format(namespace='argocd')}/{name}"

    def api(self) -> KubeApi:
        return KubeApi(self.url, lambda: "Bearer-test", None)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_binding(self, namespace: str, name: str) -> None:
        """A TargetGroupBinding (its namespace's, as argocd/apps renders one per application)."""
        path = f"{TARGET_GROUP_BINDINGS_IN.format(namespace=namespace)}/{name}"
        self.objects[path] = {"metadata": {"name": name, "namespace": namespace}}

    def binding_names(self) -> list[str]:
        return sorted(
            f"{o['metadata']['namespace']}/{o['metadata']['name']}"
            for p, o in self.objects.items()
            if "/targetgroupbindings/" in p
        )

    def application(self, name: str) -> dict[str, Any] | None:
        return self.objects.get(self._application_path(name))

    def set_destination(self, name: str, namespace: str) -> None:
        """The namespace the Application installs into (spec.destination.namespace)."""
        found = self.application(name)
        assert found is not None, name
        found["spec"]["destination"] = {"namespace": namespace}

    def add_claim(self, namespace: str, name: str, *, volume: str, reclaim: str, handle: str, stuck: bool = False) -> None:
        """A claim bound to a PersistentVolume of the EBS CSI driver. Once the claim is gone, the driver deletes a volume
        whose reclaim policy is Delete (a few readings later) unless stuck; Retain keeps it."""
        claim = f"{CLAIMS_IN.format(namespace=namespace)}/{name}"
        self.objects[claim] = {"metadata": {"name": name, "namespace": namespace}, "spec": {"volumeName": volume}}
        path = f"{VOLUMES}/{volume}"
        self.objects[path] = {
            "metadata": {"name": volume},
            "spec": {"persistentVolumeReclaimPolicy": reclaim, "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": handle}},
        }
        if reclaim == "Delete" and not stuck:
            self.volume_of[claim] = path

    def claim_names(self) -> list[str]:
        return sorted(
            f"{o['metadata']['namespace']}/{o['metadata']['name']}"
            for p, o in self.objects.items()
            if "/persistentvolumeclaims/" in p
        )

    def volume_names(self) -> list[str]:
        return sorted(o["metadata"]["name"] for p, o in self.objects.items() if p.startswith(f"{VOLUMES}/"))

    def _read(self, path: str) -> Any:
        if "?" in path:  # a list of pods with a labelSelector (equality requirements, comma-separated)
            path, _, query = path.partition("?")
            wanted = dict(
                pair.split("=", 1) for pair in urllib.parse.parse_qs(query).get("labelSelector", [""])[0].split(",") if pair
            )
            listing = self._read(path) or {"items": []}
            items = [i for i in listing["items"] if wanted.items() <= (i["metadata"].get("labels") or {}).items()]
            return {"items": items}
        if path == TARGET_GROUP_BINDINGS:  # every namespace's
            found = [self._read(p) for p in list(self.objects) if "/targetgroupbindings/" in p]
            return {"items": [item for item in found if item is not None]}
        if path.endswith(("/targetgroupbindings", "/applications", "/persistentvolumeclaims", "/pods")) or path == VOLUMES:
            found = [self._read(p) for p in list(self.objects) if p.startswith(path + "/")]
            return {"items": [item for item in found if item is not None]}
        if path in self.deleting:
            self.deleting[path] -= 1
            if self.deleting[path] <= 0:
                del self.deleting[path], self.objects[path]
                name = path.rsplit("/", 1)[1]
                self.events.append(f"gone {name}")
                self._hook(self.on_gone, path)()
                if path in self.volume_of:  # the driver deletes the volume once its claim is gone
                    self.deleting[self.volume_of.pop(path)] = self.finalizer_polls
        return self.objects.get(path)

    def _hook(self, hooks: dict[str, Callable[[], None]], path: str) -> Callable[[], None]:
        return hooks.get(path) or hooks.get(path.rsplit("/", 1)[1]) or (lambda: None)

    def answer(self, method: str, path: str, body: Any) -> Any:
        """What the API answers a request with: the object (None: 404)."""
        if method == "GET":
            return self._read(path)
        found = self.objects.get(path)
        if method == "PATCH" and found is not None:
            self.events.append(f"patch {path.rsplit('/', 1)[1]} {json.dumps(body, sort_keys=True)}")
            found["spec"]["syncPolicy"].update(body["spec"]["syncPolicy"])
        if method == "DELETE" and found is not None and path not in self.deleting:
            self.events.append(f"delete {path.rsplit('/', 1)[1]} ({body['propagationPolicy']})")
            self.deleting[path] = self.finalizer_polls
            self._hook(self.on_delete, path)()
        return found


def handler(route: Callable[[str], tuple[FakeKubernetes, str] | None]) -> type[BaseHTTPRequestHandler]:
    """A request handler of the Kubernetes API: route gives the cluster's objects and the path within them of a request's
    path (None: no such cluster, 404)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            routed = route(self.path)
            found = None
            if routed is not None:
                fake, path = routed
                fake.tokens.add(self.headers["Authorization"])
                fake.requests.append((self.command, path))
                found = fake.answer(self.command, path, body)
            payload = json.dumps(found).encode() if found is not None else b'{"kind": "Status", "code": 404}'
            self.send_response(200 if found is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

    return Handler
