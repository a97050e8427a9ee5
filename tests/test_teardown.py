"""`cdktf destroy <colour>` leaves nothing behind: the hook's order and waits against moto (ELBv2,
Route53, EC2, EKS) and a fake Kubernetes API, its refusals, and the hook run by Terraform itself."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pytest

from model.teardown_plan import TeardownPlan
from model.workloads import RESOURCES_FINALIZER
from tests.support.emulated_aws import HOSTNAME, REGION, ZONE_NAME, Emulated, FakeClock, cluster
from tests.support.fake_kubernetes import FakeKubernetes
from tools.aws import Aws, colour_leftovers
from tools.kube import KubeApi
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
    ingress_namespaces=(),
    timeout_seconds=600,
)


# The children blue runs, as argocd/apps renders them: name and sync wave. Argo CD manages itself without the
# resources finalizer; every other child has it. Written out, not read from the checkout's registry: what the
# teardown deletes is what the cluster runs.
RUNNING = {"argo-cd": -2, "aws-load-balancer-controller": -1, "external-dns": 0, "sample-app": 1}


def runs(argocd: FakeKubernetes, children: Mapping[str, int | str | None], *, unfinalized: tuple[str, ...] = ()) -> None:
    """The cluster runs the App of Apps (with the resources finalizer, as the bootstrap installs it) and exactly
    these children, all with the resources finalizer but the unfinalized ones. A wave of None: no annotation."""
    for name in argocd.application_names():
        argocd.remove_application(name)
    argocd.add_application("app-of-apps")
    for name, wave in children.items():
        argocd.add_application(name, wave=wave, finalizers=[] if name in unfinalized else None)


@pytest.fixture
def blue(emulated: Emulated, argocd: FakeKubernetes) -> Emulated:
    """blue, retired to weight 0 but still running; the controllers clean up as they would."""
    runs(argocd, RUNNING, unfinalized=("argo-cd",))
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

    teardown = teardown_of(blue, argocd, clock)
    teardown.run()

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
    assert argocd.application("argo-cd") is not None  # no resources finalizer: it goes with the cluster
    assert argocd.tokens == {"Bearer Bearer-test"}
    assert teardown.out.getvalue().splitlines() == [  # type: ignore[attr-defined]
        f"teardown: leaving argo-cd (no {RESOURCES_FINALIZER}): Terraform removes the cluster they run in",
        "teardown: app-of-apps: automated sync off",
        "teardown: application sample-app (sync wave 1): deleting",
        "teardown: application sample-app: gone",
        "teardown: application external-dns (sync wave 0): deleting",
        "teardown: application external-dns: gone",
        "teardown: application aws-load-balancer-controller (sync wave -1): deleting",
        "teardown: application aws-load-balancer-controller: gone",
        "teardown: blue: applications, load balancers and records are gone; Terraform removes the rest",
    ]


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
    argocd.remove_application("sample-app")  # the app is not a child: Terraform installed it
    argocd.add_ingress("sample-app", "sample-app")
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    plan = dataclasses.replace(PLAN, ingress_namespaces=("sample-app",))
    teardown_of(blue, argocd, FakeClock(), plan=plan).run()
    assert argocd.events[1:4] == ["delete sample-app (Foreground)", "gone sample-app", "delete external-dns (Foreground)"]


def test_the_order_is_the_sync_waves_the_cluster_runs_not_the_checkouts_registry(blue: Emulated, argocd: FakeKubernetes) -> None:
    """A colour following another Git revision: two workloads (waves 2 and 1) where the registry has sample-app,
    which the cluster does not run and nothing waits for; cert-manager, which the registry does not know, at
    wave -1 beside the load balancer controller; ExternalDNS without the annotation, so at Argo CD's wave 0."""
    runs(
        argocd,
        {
            "argo-cd": -2,
            "aws-load-balancer-controller": -1,
            "cert-manager": "-1",
            "external-dns": None,
            "shop": 1,
            "shop-api": "+2",
        },
        unfinalized=("argo-cd",),
    )
    argocd.on_gone["shop"] = lambda: blue.remove_everything("blue")  # the last Ingress: its ALB and records go
    seen_at_controller_delete: list[list[str]] = []
    argocd.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(leftovers(blue))

    teardown_of(blue, argocd, FakeClock()).run()

    assert argocd.events == [
        'patch app-of-apps {"spec": {"syncPolicy": {"automated": null}}}',
        "delete shop-api (Foreground)",
        "gone shop-api",
        "delete shop (Foreground)",
        "gone shop",
        "delete external-dns (Foreground)",
        "gone external-dns",
        "delete aws-load-balancer-controller (Foreground)",  # one wave: deleted together, then waited for
        "delete cert-manager (Foreground)",
        "gone aws-load-balancer-controller",
        "gone cert-manager",
    ]
    assert seen_at_controller_delete == [[]]
    assert sorted(argocd.application_names()) == ["app-of-apps", "argo-cd"]


def test_applications_without_the_resources_finalizer_are_left_and_named(blue: Emulated, argocd: FakeKubernetes) -> None:
    """Deleting them would not remove what they installed (a workload's Ingress, its ALB): the teardown leaves
    them, whatever their wave, and says so; the cluster goes with them."""
    runs(argocd, {**RUNNING, "dashboard": 3}, unfinalized=("argo-cd", "dashboard"))
    argocd.add_application("metrics", wave=-3, finalizers=["example.com/other"])  # another finalizer only
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    teardown = teardown_of(blue, argocd, FakeClock())
    teardown.run()
    assert [e for e in argocd.events if e.startswith("delete")] == [
        "delete sample-app (Foreground)",
        "delete external-dns (Foreground)",
        "delete aws-load-balancer-controller (Foreground)",
    ]
    assert sorted(argocd.application_names()) == ["app-of-apps", "argo-cd", "dashboard", "metrics"]
    printed = teardown.out.getvalue().splitlines()  # type: ignore[attr-defined]
    assert (
        printed[0]
        == f"teardown: leaving argo-cd, dashboard, metrics (no {RESOURCES_FINALIZER}): Terraform removes the cluster they run in"
    )
    assert sum("leaving" in line for line in printed) == 1


def test_the_finalizer_with_a_deletion_mode_cascades_too(blue: Emulated, argocd: FakeKubernetes) -> None:
    """Argo CD's `resources-finalizer.argocd.argoproj.io/background` deletes what the app installed as the plain
    one does: such a workload must go before the wait, not be left to orphan its load balancer."""
    runs(argocd, RUNNING, unfinalized=("argo-cd",))
    argocd.add_application("shop", wave=2, finalizers=[f"{RESOURCES_FINALIZER}/background"])
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    teardown_of(blue, argocd, FakeClock()).run()
    assert [e for e in argocd.events if e.startswith("delete")][:2] == [
        "delete shop (Foreground)",
        "delete sample-app (Foreground)",
    ]


@pytest.mark.parametrize("value", ["minus-one", "1.5", "", " 1", "1_0"])
def test_a_sync_wave_that_is_not_an_integer_stops_the_teardown_before_anything_changes(
    blue: Emulated, argocd: FakeKubernetes, value: str
) -> None:
    argocd.add_application("cert-manager", wave=value)
    with pytest.raises(TeardownError) as failure:
        teardown_of(blue, argocd, FakeClock()).run()
    assert str(failure.value) == (
        f"application cert-manager: its annotation argocd.argoproj.io/sync-wave is {value!r}, not an integer, so the "
        "order to delete the applications in is unknown. Fix it in the Git revision blue follows, let Argo CD sync it, "
        "then run `cdktf destroy blue` again; nothing of blue has been deleted"
    )
    assert argocd.events == []  # not even the parent's automated sync
    assert len(leftovers(blue)) == 5


def test_a_plan_a_colour_was_deployed_with_before_still_runs_it(blue: Emulated, argocd: FakeKubernetes) -> None:
    """Its Terraform state still lists the applications, as the checkout had them: what a destroy hands the hook.
    They are ignored; the cluster says what goes."""
    old = {**PLAN.to_json(), "workload_applications": ["sample-app"], "controller_applications": ["external-dns"]}
    plan = TeardownPlan.from_json(json.dumps(old))
    assert plan == PLAN
    argocd.on_gone["sample-app"] = lambda: blue.remove_everything("blue")
    teardown_of(blue, argocd, FakeClock(), plan=plan).run()
    assert sorted(argocd.application_names()) == ["app-of-apps", "argo-cd"]
    with pytest.raises(ValueError, match="a teardown plan has exactly the keys"):
        TeardownPlan.from_json(json.dumps({**old, "applications": []}))
