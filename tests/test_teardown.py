"""`cdktf destroy <colour>` leaves nothing behind: the hook's order and waits against moto (ELBv2,
Route53, EC2, EKS) and a fake Kubernetes API, its refusals, and the hook run by Terraform itself."""

from __future__ import annotations

import dataclasses
import io
import threading
from datetime import datetime
from typing import Any

import pytest

from model.teardown_plan import TeardownPlan
from tests.support.emulated_aws import HOSTNAME, REGION, ZONE_NAME, Emulated, FakeClock, cluster
from tests.support.fake_kubernetes import FakeKubernetes
from tools.aws import Aws, colour_leftovers
from tools.kube import APPLICATIONS, KubeApi
from tools.teardown import Teardown, TeardownError, UnsafeTeardownError

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


@pytest.fixture
def blue(emulated: Emulated, argocd: FakeKubernetes) -> Emulated:
    """blue, retired to weight 0 but still running; the controllers clean up as they would."""
    emulated.deploy_cluster("blue")
    emulated.make_load_balancer("blue")
    emulated.write_records("blue", 0)
    argocd.on_gone["sample-app"] = lambda: emulated.remove_load_balancer("blue")  # the Ingress finalizer
    return emulated


def leftovers(aws: Emulated) -> list[str]:
    return colour_leftovers(
        route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, zone=aws.zone, colour="blue", cluster=cluster("blue")
    )


def teardown_of(
    aws: Emulated, argocd: FakeKubernetes | None, clock: FakeClock, plan: TeardownPlan = PLAN, **options: Any
) -> Teardown:
    def api(cluster_name: str) -> KubeApi:
        assert argocd is not None, "the hook must not call the Kubernetes API of a cluster that does not exist"
        assert cluster_name == plan.cluster
        return argocd.api()

    clients = Aws(REGION, route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, eks=aws.eks, kube=api)
    return Teardown(plan=plan, aws=clients, clock=clock, out=io.StringIO(), **options)


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
    blue: Emulated, argocd: FakeKubernetes
) -> None:
    clock = FakeClock()
    seen_at_controller_delete: list[list[str]] = []
    argocd.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(leftovers(blue))
    ingress_gone = threading.Event()

    def ingress_finalizer() -> None:  # the load balancer controller removes the ALB, then the Ingress goes
        blue.remove_load_balancer("blue")
        ingress_gone.set()

    argocd.on_gone["sample-app"] = ingress_finalizer
    external_dns_removes_records_after(blue, clock, 60, ingress_gone)

    teardown_of(blue, argocd, clock).run()

    assert argocd.events == [
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
    assert argocd.application("app-of-apps") is not None  # Terraform removes the parent next (its release)
    assert argocd.tokens == {"Bearer Bearer-test"}


def test_a_colour_that_still_has_weight_in_route53_is_not_touched(blue: Emulated, argocd: FakeKubernetes) -> None:
    blue.write_records("blue", 30)
    with pytest.raises(
        UnsafeTeardownError, match=r"blue still has weight 30 in Route53 for app\.eks\.example\.com: shift its traffic"
    ):
        teardown_of(blue, argocd, FakeClock()).run()
    assert argocd.events == []
    assert len(leftovers(blue)) == 5  # 2 records, load balancer, target group, security group


def test_a_colour_deployed_with_weight_is_not_touched(blue: Emulated, argocd: FakeKubernetes) -> None:
    with pytest.raises(UnsafeTeardownError, match=r"clusters.blue.weight is 20 in the config blue was deployed with"):
        teardown_of(blue, argocd, FakeClock(), plan=dataclasses.replace(PLAN, weight=20)).run()
    assert argocd.events == []


def test_force_takes_down_a_colour_that_still_has_weight(blue: Emulated, argocd: FakeKubernetes) -> None:
    blue.write_records("blue", 30)
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    teardown_of(blue, argocd, FakeClock(), plan=dataclasses.replace(PLAN, weight=20), force=True).run()
    assert leftovers(blue) == []
    assert argocd.application("aws-load-balancer-controller") is None


def test_what_outlives_the_bounded_wait_is_named_and_the_controllers_are_kept(blue: Emulated, argocd: FakeKubernetes) -> None:
    argocd.on_gone["sample-app"] = lambda: None  # the controller is stuck: the ALB stays
    clock = FakeClock()
    with pytest.raises(TeardownError) as failure:
        teardown_of(blue, argocd, clock, plan=dataclasses.replace(PLAN, timeout_seconds=120)).run()
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
    assert argocd.application("external-dns") is not None
    assert argocd.application("aws-load-balancer-controller") is not None


def test_two_zones_with_the_sub_zones_name_stop_the_destroy_instead_of_hiding_the_records(
    blue: Emulated, argocd: FakeKubernetes
) -> None:
    twin = blue.route53.create_hosted_zone(Name=ZONE_NAME, CallerReference="twin")["HostedZone"]["Id"]
    try:
        with pytest.raises(TeardownError, match=r"2 public hosted zones are named eks\.example\.com .*nothing of blue"):
            teardown_of(blue, argocd, FakeClock()).run()
        assert argocd.events == []
    finally:
        blue.route53.delete_hosted_zone(Id=twin)


def test_a_cluster_that_is_already_gone_only_waits_for_aws(emulated: Emulated) -> None:
    teardown_of(emulated, None, FakeClock()).run()  # no EKS cluster: the Kubernetes API is never called


def test_an_unreachable_kubernetes_api_stops_the_destroy_unless_forced(blue: Emulated) -> None:
    closed = FakeKubernetes()
    closed.close()
    with pytest.raises(TeardownError, match="cannot reach eks-bg-blue's Kubernetes API"):
        teardown_of(blue, closed, FakeClock()).run()
    assert len(leftovers(blue)) == 5
    blue.remove_load_balancer("blue")  # what is left to do once the controllers have done their part
    blue.remove_records("blue")
    forced = teardown_of(blue, closed, FakeClock(), force=True)
    forced.run()  # goes on without the Kubernetes API: says so, and still waits until AWS holds nothing of blue
    printed = forced.out.getvalue().splitlines()  # type: ignore[attr-defined]
    assert printed[0] == "teardown: --force: not checking blue's weight"
    assert printed[1].startswith("teardown: --force: skipping the applications, the Kubernetes API is unreachable (")
    assert printed[-1] == "teardown: blue: applications, load balancers and records are gone; Terraform removes the rest"
    assert leftovers(blue) == []


def test_helm_delivered_ingresses_are_deleted_before_the_controllers(blue: Emulated, argocd: FakeKubernetes) -> None:
    argocd.objects.pop(f"{APPLICATIONS.format(namespace='argocd')}/sample-app")
    argocd.add_ingress("sample-app", "sample-app")
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    plan = dataclasses.replace(PLAN, workload_applications=(), ingress_namespaces=("sample-app",))
    teardown_of(blue, argocd, FakeClock(), plan=plan).run()
    assert argocd.events[1:4] == ["delete sample-app (Foreground)", "gone sample-app", "delete external-dns (Foreground)"]
