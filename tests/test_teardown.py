"""`cdktf destroy <colour>` leaves nothing behind: the hook's order and waits against moto (ELBv2,
Route53, EC2, EKS) and a fake Kubernetes API, its refusals, and the hook run by Terraform itself."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from model.teardown_plan import TeardownPlan
from tests.support.emulated_aws import HOSTNAME, REGION, ZONE_NAME, Emulated, FakeClock, cluster
from tools.aws import colour_leftovers
from tools.kube import APPLICATIONS, INGRESSES, KubeApi
from tools.teardown import Teardown, TeardownAws, TeardownError, UnsafeTeardownError

PLAN = TeardownPlan(
    colour="blue",
    cluster=cluster("blue"),
    region=REGION,
    zone_name=ZONE_NAME,
    hostname=HOSTNAME,
    weight=0,
    argocd_namespace="argocd",
    parent_application="app-of-apps",
    workload_applications=("sample-app",),
    controller_applications=("external-dns", "aws-load-balancer-controller"),
    ingress_namespaces=(),
    timeout_seconds=600,
)
FINALIZER_POLLS = 3  # readings a deleted object survives while its finalizer runs


class FakeKubernetes:
    """Argo CD Applications and Ingresses behind the Kubernetes REST paths the hook uses.

    A deleted object lingers for a few readings (its finalizer at work), then disappears and
    runs its `on_gone` hook: what the controllers would have done meanwhile."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.deleting: dict[str, int] = {}
        self.on_gone: dict[str, Callable[[], None]] = {}
        self.on_delete: dict[str, Callable[[], None]] = {}
        self.events: list[str] = []
        self.tokens: set[str] = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        # A short poll: shutdown() waits for the loop's next poll (0.5 s by default), once per test.
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add_application(self, name: str) -> None:
        path = f"{APPLICATIONS.format(namespace='argocd')}/{name}"
        self.objects[path] = {"metadata": {"name": name}, "spec": {"syncPolicy": {"automated": {"prune": True}}}}

    def add_ingress(self, namespace: str, name: str) -> None:
        self.objects[f"{INGRESSES.format(namespace=namespace)}/{name}"] = {"metadata": {"name": name}}

    def application(self, name: str) -> dict[str, Any] | None:
        return self.objects.get(f"{APPLICATIONS.format(namespace='argocd')}/{name}")

    def _read(self, path: str) -> Any:
        if path.endswith("/ingresses"):
            found = [self._read(p) for p in list(self.objects) if p.startswith(path + "/")]
            return {"items": [item for item in found if item is not None]}
        if path in self.deleting:
            self.deleting[path] -= 1
            if self.deleting[path] <= 0:
                del self.deleting[path], self.objects[path]
                name = path.rsplit("/", 1)[1]
                self.events.append(f"gone {name}")
                self.on_gone.get(name, lambda: None)()
        return self.objects.get(path)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, body: Any) -> None:
                payload = json.dumps(body).encode() if body is not None else b'{"kind": "Status", "code": 404}'
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _body(self) -> Any:
                fake.tokens.add(self.headers["Authorization"])
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length)) if length else None

            def do_GET(self) -> None:
                self._body()
                self._answer(fake._read(self.path))

            def do_PATCH(self) -> None:
                patch, found = self._body(), fake.objects.get(self.path)
                if found is not None:
                    fake.events.append(f"patch {self.path.rsplit('/', 1)[1]} {json.dumps(patch, sort_keys=True)}")
                    found["spec"]["syncPolicy"].update(patch["spec"]["syncPolicy"])
                self._answer(found)

            def do_DELETE(self) -> None:
                options, found = self._body(), fake.objects.get(self.path)
                if found is not None and self.path not in fake.deleting:
                    name = self.path.rsplit("/", 1)[1]
                    fake.events.append(f"delete {name} ({options['propagationPolicy']})")
                    fake.deleting[self.path] = FINALIZER_POLLS
                    fake.on_delete.get(name, lambda: None)()
                self._answer(found)

        return Handler


@pytest.fixture
def kube() -> Iterator[FakeKubernetes]:
    fake = FakeKubernetes()
    for name in ("app-of-apps", "aws-load-balancer-controller", "external-dns", "sample-app"):
        fake.add_application(name)
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


@pytest.fixture
def blue(emulated: Emulated, kube: FakeKubernetes) -> Emulated:
    """blue, retired to weight 0 but still running; the controllers clean up as they would."""
    emulated.deploy_cluster("blue")
    emulated.make_load_balancer("blue")
    emulated.write_records("blue", 0)
    kube.on_gone["sample-app"] = lambda: emulated.remove_load_balancer("blue")  # the Ingress finalizer
    return emulated


def leftovers(aws: Emulated) -> list[str]:
    return colour_leftovers(
        route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, zone=aws.zone, colour="blue", cluster=cluster("blue")
    )


def teardown_of(
    aws: Emulated, kube: FakeKubernetes | None, clock: FakeClock, plan: TeardownPlan = PLAN, **options: Any
) -> Teardown:
    def api() -> KubeApi:
        assert kube is not None, "the hook must not call the Kubernetes API of a cluster that does not exist"
        return KubeApi(kube.url, lambda: "Bearer-test", None)

    clients = TeardownAws(aws.route53, aws.elbv2, aws.ec2, aws.eks)
    return Teardown(plan=plan, aws=clients, kube=api, clock=clock, out=io.StringIO(), **options)


def external_dns_removes_records_after(aws: Emulated, clock: FakeClock, seconds: float, ingress_gone: threading.Event) -> None:
    """ExternalDNS notices the Ingress is gone on its next sync, some time after."""
    since: list[datetime] = []

    def tick(before: datetime, after: datetime) -> None:
        if ingress_gone.is_set() and not since:
            since.append(after)
        if since and (after - since[0]).total_seconds() >= seconds:
            aws.remove_records("blue")

    clock.on_sleep.append(tick)


def test_workloads_go_first_then_their_load_balancer_and_records_then_the_controllers(
    blue: Emulated, kube: FakeKubernetes
) -> None:
    clock = FakeClock()
    seen_at_controller_delete: list[list[str]] = []
    kube.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(leftovers(blue))
    ingress_gone = threading.Event()

    def ingress_finalizer() -> None:  # the load balancer controller removes the ALB, then the Ingress goes
        blue.remove_load_balancer("blue")
        ingress_gone.set()

    kube.on_gone["sample-app"] = ingress_finalizer
    external_dns_removes_records_after(blue, clock, 60, ingress_gone)

    teardown_of(blue, kube, clock).run()

    assert kube.events == [
        'patch app-of-apps {"spec": {"syncPolicy": {"automated": null}}}',
        "delete sample-app (Foreground)",
        "gone sample-app",
        "delete external-dns (Foreground)",
        "gone external-dns",
        "delete aws-load-balancer-controller (Foreground)",
        "gone aws-load-balancer-controller",
    ]
    assert seen_at_controller_delete == [[]], "ExternalDNS and the controller must outlive the ALB and the records"
    assert leftovers(blue) == []
    assert kube.application("app-of-apps") is not None  # Terraform removes the parent next (its release)
    assert kube.tokens == {"Bearer Bearer-test"}


def test_a_colour_that_still_has_weight_in_route53_is_not_touched(blue: Emulated, kube: FakeKubernetes) -> None:
    blue.write_records("blue", 30)
    with pytest.raises(
        UnsafeTeardownError, match=r"blue still has weight 30 in Route53 for app\.eks\.example\.com: shift its traffic"
    ):
        teardown_of(blue, kube, FakeClock()).run()
    assert kube.events == []
    assert len(leftovers(blue)) == 5  # 2 records, load balancer, target group, security group


def test_a_colour_deployed_with_weight_is_not_touched(blue: Emulated, kube: FakeKubernetes) -> None:
    with pytest.raises(UnsafeTeardownError, match=r"clusters.blue.weight is 20 in the config blue was deployed with"):
        teardown_of(blue, kube, FakeClock(), plan=dataclasses.replace(PLAN, weight=20)).run()
    assert kube.events == []


def test_force_takes_down_a_colour_that_still_has_weight(blue: Emulated, kube: FakeKubernetes) -> None:
    blue.write_records("blue", 30)
    kube.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    teardown_of(blue, kube, FakeClock(), plan=dataclasses.replace(PLAN, weight=20), force=True).run()
    assert leftovers(blue) == []
    assert kube.application("aws-load-balancer-controller") is None


def test_what_outlives_the_bounded_wait_is_named_and_the_controllers_are_kept(blue: Emulated, kube: FakeKubernetes) -> None:
    kube.on_gone["sample-app"] = lambda: None  # the controller is stuck: the ALB stays
    clock = FakeClock()
    with pytest.raises(TeardownError) as failure:
        teardown_of(blue, kube, clock, plan=dataclasses.replace(PLAN, timeout_seconds=120)).run()
    message = str(failure.value)
    assert message.startswith("after 120 s (traffic.teardown_timeout_seconds) still there: Route53 ")
    for part in (
        "Route53 A record app.eks.example.com. (set identifier blue)",
        "Route53 TXT record a-app.eks.example.com. (set identifier blue)",
        "load balancer arn:aws:elasticloadbalancing:",
        "target group arn:aws:elasticloadbalancing:",
        "security group sg-",
    ):
        assert part in message
    assert "run `cdktf destroy blue` again" in message
    assert clock.slept <= 120 + 10
    assert kube.application("external-dns") is not None
    assert kube.application("aws-load-balancer-controller") is not None


def test_two_zones_with_the_sub_zones_name_stop_the_destroy_instead_of_hiding_the_records(
    blue: Emulated, kube: FakeKubernetes
) -> None:
    twin = blue.route53.create_hosted_zone(Name=ZONE_NAME, CallerReference="twin")["HostedZone"]["Id"]
    try:
        with pytest.raises(TeardownError, match=r"2 public hosted zones are named eks\.example\.com .*nothing of blue"):
            teardown_of(blue, kube, FakeClock()).run()
        assert kube.events == []
    finally:
        blue.route53.delete_hosted_zone(Id=twin)


def test_a_cluster_that_is_already_gone_only_waits_for_aws(emulated: Emulated) -> None:
    teardown_of(emulated, None, FakeClock()).run()  # no EKS cluster: the Kubernetes API is never called


def test_an_unreachable_kubernetes_api_stops_the_destroy_unless_forced(blue: Emulated) -> None:
    closed = FakeKubernetes()
    closed.server.shutdown()
    closed.server.server_close()
    with pytest.raises(TeardownError, match="cannot reach eks-bg-blue's Kubernetes API"):
        teardown_of(blue, closed, FakeClock()).run()
    assert len(leftovers(blue)) == 5
    blue.remove_load_balancer("blue")
    blue.remove_records("blue")
    teardown_of(blue, closed, FakeClock(), force=True).run()


def test_helm_delivered_ingresses_are_deleted_before_the_controllers(blue: Emulated, kube: FakeKubernetes) -> None:
    kube.objects.pop(f"{APPLICATIONS.format(namespace='argocd')}/sample-app")
    kube.add_ingress("sample-app", "sample-app")
    kube.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    plan = dataclasses.replace(PLAN, workload_applications=(), ingress_namespaces=("sample-app",))
    teardown_of(blue, kube, FakeClock(), plan=plan).run()
    assert kube.events[1:4] == ["delete sample-app (Foreground)", "gone sample-app", "delete external-dns (Foreground)"]
