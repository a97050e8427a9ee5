"""`cdktf destroy <colour>` leaves nothing behind: the hook's order and waits against moto (ELBv2, SSM, Route53, EC2,
EKS) and a fake Kubernetes API, its refusals, and what a colour's own controllers made outside the shared load
balancer."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import pytest

from model.platform import RESOURCES_FINALIZER
from model.teardown_plan import TeardownPlan
from tests.support.emulated_aws import PROJECT, REGION, ZONE_NAME, Emulated, FakeClock, cluster, teardown_plan_of
from tests.support.fake_kubernetes import FakeKubernetes
from tools.aws import Aws
from tools.hooks.teardown import Teardown, TeardownError, UnsafeTeardownError
from tools.kube import KubeApi
from tools.leftovers import colour_leftovers
from tools.live_routes import read_routes
from tools.traffic_lock import TrafficLock

PLAN = teardown_plan_of("blue")
APPS = {"sample-app": "app", "shop": "shop"}  # application -> host label, in the shared load balancer

# The children blue runs, as argocd/apps renders them: name and sync wave. Argo CD manages itself without the
# resources finalizer; every other child has it. Written out, not read from the checkout's registry: what the
# teardown deletes is what the cluster runs.
RUNNING = {"argo-cd": -2, "aws-load-balancer-controller": -1, "external-dns": 0, "sample-app": 1, "shop": 1}
# A colour running one application whose Ingress its own controllers serve.
RAN_BEFORE = {"argo-cd": -2, "aws-load-balancer-controller": -1, "external-dns": 0, "sample-app": 1}


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
    """blue, shifted to weight 0 but still running: its pods still in its target groups of the shared load balancer,
    behind a TargetGroupBinding per application; the load balancer controller deregisters them as it would."""
    runs(argocd, RUNNING, unfinalized=("argo-cd",))
    emulated.deploy_cluster("blue")
    emulated.deploy_traffic(APPS, {"blue": 0, "green": 100})
    emulated.register_pods("blue")
    for app in APPS:
        argocd.add_binding(app, app)
        # The binding's finalizer: the controller takes its targets out, then lets it go.
        argocd.on_gone[app] = lambda app=app: emulated.deregister_pods("blue", app)  # type: ignore[misc]
    return emulated


def leftovers(aws: Emulated) -> list[str]:
    return colour_leftovers(
        route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, zone=aws.zone, colour="blue", cluster=cluster("blue")
    )


def registered(aws: Emulated, colour: str = "blue") -> int:
    groups = read_routes(aws.elbv2, PROJECT).of_colour(colour)
    return sum(len(aws.elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]) for arn in groups.values())


def forwarding(aws: Emulated) -> dict[str, list[str]]:
    """The colours each application's public rule forwards to (whatever their weight)."""
    return {app: sorted(weights) for app, weights in aws.forwarded().items()}


def teardown_of(
    aws: Emulated, argocd: FakeKubernetes | None, clock: FakeClock, plan: TeardownPlan = PLAN, **options: Any
) -> Teardown:
    def api(cluster_name: str) -> KubeApi:
        assert argocd is not None, "the hook must not call the Kubernetes API of a cluster that does not exist"
        assert cluster_name == plan.cluster
        return argocd.api()

    clients = Aws(REGION, route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, eks=aws.eks, ssm=aws.ssm, sts=aws.sts, kube=api)
    return Teardown(plan=plan, aws=clients, clock=clock, out=io.StringIO(), **options)


# --- a colour behind the shared load balancer ---------------------------------------------------------------------


def test_applications_go_first_then_their_targets_then_the_controllers(blue: Emulated, argocd: FakeKubernetes) -> None:
    clock = FakeClock()
    seen_at_controller_delete: list[int] = []
    argocd.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(registered(blue))
    teardown = teardown_of(blue, argocd, clock)
    teardown.run()

    assert argocd.events == [
        'patch app-of-apps {"spec": {"syncPolicy": {"automated": null}}}',
        "delete sample-app (Foreground)",
        "delete shop (Foreground)",
        "gone sample-app",
        "gone shop",
        "delete sample-app (Foreground)",
        "delete shop (Foreground)",
        "gone sample-app",
        "gone shop",
        "delete external-dns (Foreground)",
        "gone external-dns",
        "delete aws-load-balancer-controller (Foreground)",
        "gone aws-load-balancer-controller",
    ]
    assert seen_at_controller_delete == [0], "the controller must outlive the colour's targets"
    assert argocd.binding_names() == []
    # blue's target groups are out of every weighted rule: the traffic stack can delete them once blue leaves config.
    assert forwarding(blue) == {app: ["green"] for app in APPS}
    assert blue.live_weights() == {"green": 100}  # and out of the live weights, under the lock
    assert argocd.application("app-of-apps") is not None  # Terraform removes the parent next (its release)
    assert argocd.application("argo-cd") is not None  # no resources finalizer: it goes with the cluster
    assert teardown.out.getvalue().splitlines() == [  # type: ignore[attr-defined]
        f"teardown: leaving argo-cd (no {RESOURCES_FINALIZER}): Terraform removes the cluster they run in",
        "teardown: app-of-apps: automated sync off",
        "teardown: application sample-app (sync wave 1): deleting",
        "teardown: application shop (sync wave 1): deleting",
        "teardown: application sample-app: gone",
        "teardown: application shop: gone",
        "teardown: TargetGroupBinding sample-app/sample-app: deleting",
        "teardown: TargetGroupBinding shop/shop: deleting",
        "teardown: blue's target groups taken out of 2 weighted rule(s), and blue out of the live weights",
        "teardown: application external-dns (sync wave 0): deleting",
        "teardown: application external-dns: gone",
        "teardown: application aws-load-balancer-controller (sync wave -1): deleting",
        "teardown: application aws-load-balancer-controller: gone",
        "teardown: blue: applications, targets, load balancers and records are gone; Terraform removes the rest",
    ]


def test_a_colour_with_live_weight_in_the_shared_load_balancer_is_not_touched(blue: Emulated, argocd: FakeKubernetes) -> None:
    blue.ssm.put_parameter(Name="/eks-bg/traffic/weights", Value='{"blue": 30, "green": 70}', Overwrite=True, Type="String")
    with pytest.raises(UnsafeTeardownError, match=r"blue still has weight 30 in the shared load balancer: shift its traffic"):
        teardown_of(blue, argocd, FakeClock()).run()
    assert argocd.events == []
    assert registered(blue) == len(APPS)


def test_a_rule_still_forwarding_to_the_colour_counts_as_weight(blue: Emulated, argocd: FakeKubernetes) -> None:
    """The parameter says 0 but a rule still sends blue a share (a change stopped half-way): refused too."""
    routes = read_routes(blue.elbv2, PROJECT)
    route = routes.public["shop"]
    forward = [{"TargetGroupArn": arn, "Weight": 5 if colour == "blue" else 95} for colour, arn in route.target_groups.items()]
    blue.elbv2.modify_rule(RuleArn=route.rule_arn, Actions=[{"Type": "forward", "ForwardConfig": {"TargetGroups": forward}}])
    with pytest.raises(UnsafeTeardownError, match=r"blue still has weight 5 in the shared load balancer"):
        teardown_of(blue, argocd, FakeClock()).run()


def test_the_weight_an_earlier_release_carried_in_its_plan_is_not_asked(blue: Emulated, argocd: FakeKubernetes) -> None:
    """A colour deployed by an earlier release carries its config's weight in its state (the plan's `weight`): the
    live weights say blue serves nothing, so the teardown goes on."""
    earlier = TeardownPlan.from_json(json.dumps({**PLAN.to_json(), "weight": 20}))
    assert earlier == PLAN
    teardown_of(blue, argocd, FakeClock(), plan=earlier).run()
    assert registered(blue) == 0


def test_targets_that_outlive_the_bounded_wait_are_named_and_the_controllers_are_kept(
    blue: Emulated, argocd: FakeKubernetes
) -> None:
    argocd.on_gone["shop"] = lambda: None  # the controller is stuck: shop's pods stay registered
    clock = FakeClock()
    with pytest.raises(TeardownError) as failure:
        teardown_of(blue, argocd, clock, plan=dataclasses.replace(PLAN, timeout_seconds=120)).run()
    message = str(failure.value)
    assert message.startswith("after 120 s (traffic.teardown_timeout_seconds) still there: 1 target(s) of shop in target group ")
    assert "run `cdktf destroy blue` again" in message
    assert clock.slept <= 120 + 10
    assert argocd.application("aws-load-balancer-controller") is not None


def test_the_detach_waits_for_no_one_and_refuses_while_the_traffic_is_locked(blue: Emulated, argocd: FakeKubernetes) -> None:
    lock = TrafficLock(blue.ssm, blue.sts, PROJECT, "python -m tools.shift --to green", FakeClock())
    with lock.held(), pytest.raises(TeardownError, match=r"the traffic of eks-bg is locked by .*blue's applications are gone"):
        teardown_of(blue, argocd, FakeClock()).run()
    assert registered(blue) == 0
    assert forwarding(blue) == {app: ["blue", "green"] for app in APPS}
    teardown_of(blue, argocd, FakeClock()).run()  # a re-run resumes: the detach, then the controllers
    assert forwarding(blue) == {app: ["green"] for app in APPS}


def test_a_cluster_that_is_already_gone_only_waits_for_aws(emulated: Emulated) -> None:
    """No EKS cluster of blue's name: the hook asks for no Kubernetes API (teardown_of fails the test if it does) and
    writes nothing to AWS; it reads until what blue's controllers made is gone (here its own load balancer, target group
    and security group, which AWS finishes deleting a minute into the wait) and only then returns."""
    emulated.make_load_balancer("blue")
    clock = FakeClock()
    start = clock.now()

    def aws_finishes(_: datetime, now: datetime) -> None:
        if now - start >= timedelta(minutes=1) and "blue" in emulated.footprints:
            emulated.remove_load_balancer("blue")  # through the world's own clients: not among the hook's calls below

    clock.on_sleep.append(aws_finishes)
    hooks = emulated.another_process()  # clients of the hook's own, so that only its calls are recorded
    calls: list[str] = []
    for client in (hooks.route53, hooks.elbv2, hooks.ec2, hooks.eks, hooks.ssm, hooks.sts):
        client.meta.events.register("before-call.*.*", lambda model, **_: calls.append(model.name))
    teardown_of(hooks, None, clock).run()

    assert leftovers(emulated) == []
    assert clock.slept >= 60, "it returned before AWS had deleted blue's load balancer"
    assert {"DescribeCluster", "DescribeLoadBalancers", "DescribeTargetGroups", "DescribeSecurityGroups"} <= set(calls)
    assert sorted({c for c in calls if not c.startswith(("Describe", "List", "Get"))}) == [], "it only reads"


def test_an_unreachable_kubernetes_api_stops_the_destroy_unless_forced(blue: Emulated) -> None:
    closed = FakeKubernetes()
    closed.close()
    with pytest.raises(TeardownError, match="cannot reach eks-bg-blue's Kubernetes API"):
        teardown_of(blue, closed, FakeClock()).run()
    assert registered(blue) == len(APPS)
    forced = teardown_of(blue, closed, FakeClock(), force=True)
    forced.run()  # goes on without the Kubernetes API: says so, deregisters blue's pods itself (no controller will)
    printed = forced.out.getvalue().splitlines()  # type: ignore[attr-defined]
    assert printed[0] == "teardown: --force: not checking blue's weight"
    assert printed[1].startswith("teardown: --force: skipping the applications, the Kubernetes API is unreachable (")
    assert "volumes their claims hold stay (EBS volumes tagged ebs.csi.aws.com/cluster-name=eks-bg-blue)" in printed[1]
    assert printed[2:4] == [
        f"teardown: 1 target(s) of {app} deregistered from blue's target group: no controller of blue is left to do it"
        for app in APPS
    ]
    assert printed[-1] == "teardown: blue: applications, targets, load balancers and records are gone; Terraform removes the rest"
    assert registered(blue) == 0
    assert forwarding(blue) == {app: ["green"] for app in APPS}  # and detached


def test_a_cluster_that_is_gone_leaves_its_targets_to_the_teardown(blue: Emulated) -> None:
    """Its cluster was deleted by hand (or a destroy stopped after the cluster went): no controller will take blue's pods
    out of the shared load balancer, so the teardown does, and finishes without any Kubernetes API."""
    blue.eks.delete_cluster(name="eks-bg-blue")
    teardown = teardown_of(blue, None, FakeClock())
    teardown.run()
    assert registered(blue) == 0
    assert forwarding(blue) == {app: ["green"] for app in APPS}
    said = teardown.out.getvalue()  # type: ignore[attr-defined]
    assert "teardown: 1 target(s) of shop deregistered from blue's target group: no controller of blue is left" in said


def test_the_claims_a_statefulset_left_go_and_their_volumes_are_waited_for(blue: Emulated, argocd: FakeKubernetes) -> None:
    """shop's StatefulSet left two claims when its Application went: one bound to a volume the driver deletes, one to a
    volume kept by its Retain policy. The teardown deletes both claims, waits for the first volume, names the second."""
    argocd.set_destination("shop", "shop")
    argocd.add_claim("shop", "data-shop-0", volume="pvc-1", reclaim="Delete", handle="vol-0aaa")
    argocd.add_claim("shop", "data-shop-1", volume="pvc-2", reclaim="Retain", handle="vol-0bbb")
    argocd.add_claim("elsewhere", "not-ours", volume="pvc-3", reclaim="Delete", handle="vol-0ccc")
    teardown = teardown_of(blue, argocd, FakeClock())
    teardown.run()
    assert argocd.claim_names() == ["elsewhere/not-ours"]
    assert argocd.volume_names() == ["pvc-2", "pvc-3"]  # the retained one, and another namespace's
    said = teardown.out.getvalue().splitlines()  # type: ignore[attr-defined]
    assert "teardown: claim shop/data-shop-0: deleting" in said
    assert (
        "teardown: volume pvc-2 (EBS volume vol-0bbb) is kept: its reclaim policy is Retain; delete it yourself once its "
        "data is safe elsewhere (docs/stateful-workloads.md)"
    ) in said
    # The claims went after the applications, before the bindings: while the driver and the nodes still run.
    order = [line for line in said if "claim shop/" in line or "TargetGroupBinding" in line or "application shop: gone" in line]
    assert order[0] == "teardown: application shop: gone"
    assert order[-1].startswith("teardown: TargetGroupBinding ")


def test_volumes_that_outlive_the_bounded_wait_are_named(blue: Emulated, argocd: FakeKubernetes) -> None:
    argocd.set_destination("shop", "shop")
    argocd.add_claim("shop", "data-shop-0", volume="pvc-1", reclaim="Delete", handle="vol-0aaa", stuck=True)
    with pytest.raises(TeardownError, match=r"still there: volume pvc-1 \(the EBS CSI driver deletes it\)"):
        teardown_of(blue, argocd, FakeClock(), plan=dataclasses.replace(PLAN, timeout_seconds=120)).run()
    assert argocd.binding_names() == ["sample-app/sample-app", "shop/shop"]  # nothing after the claims ran


# --- what a colour's own controllers made: a load balancer for an Ingress, ExternalDNS's records ----------------------


@pytest.fixture
def before(emulated: Emulated, argocd: FakeKubernetes) -> Emulated:
    """blue whose controllers made a load balancer of its own for an Ingress, and ExternalDNS's records of it (weight 0):
    the teardown waits until they are gone, and the controllers outlive them."""
    runs(
        argocd, {"argo-cd": -2, "aws-load-balancer-controller": -1, "external-dns": 0, "sample-app": 1}, unfinalized=("argo-cd",)
    )
    emulated.deploy_cluster("blue")
    emulated.make_load_balancer("blue")
    emulated.write_records("blue", 0)
    argocd.on_gone["sample-app"] = lambda: emulated.remove_load_balancer("blue")  # the Ingress finalizer
    return emulated


def external_dns_removes_records_after(aws: Emulated, clock: FakeClock, seconds: float, ingress_gone: threading.Event) -> None:
    """ExternalDNS notices the Ingress is gone on its next sync, some time after."""
    since: list[datetime] = []

    def tick(before: datetime, after: datetime) -> None:
        if ingress_gone.is_set() and not since:
            since.append(after)
        if since and (after - since[0]).total_seconds() >= seconds:
            aws.remove_records("blue")

    clock.on_sleep.append(tick)


def test_a_colour_deployed_before_goes_as_it_did_its_load_balancer_and_records_before_the_controllers(
    before: Emulated, argocd: FakeKubernetes
) -> None:
    clock = FakeClock()
    seen_at_controller_delete: list[list[str]] = []
    argocd.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(leftovers(before))
    ingress_gone = threading.Event()

    def ingress_finalizer() -> None:  # the load balancer controller removes the ALB, then the Ingress goes
        before.remove_load_balancer("blue")
        ingress_gone.set()

    argocd.on_gone["sample-app"] = ingress_finalizer
    external_dns_removes_records_after(before, clock, 60, ingress_gone)

    teardown = teardown_of(before, argocd, clock)
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
    assert leftovers(before) == []
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
        "teardown: blue: applications, targets, load balancers and records are gone; Terraform removes the rest",
    ]


def test_retiring_blue_waits_only_for_blues_records_not_for_a_colour_named_blue_2(
    before: Emulated, argocd: FakeKubernetes
) -> None:
    """Beside blue runs blue-2 (its cluster eks-bg-blue-2 serving, weight 100): blue's name is a prefix of its set
    identifier, of its ExternalDNS owner and of its load balancer controller's cluster tag. blue's teardown counts only
    what is blue's, to the whole token, so it ends as soon as blue's own are gone and leaves blue-2's alone."""
    before.make_load_balancer("blue-2")
    before.write_records("blue-2", 100)
    clock = FakeClock()
    ingress_gone = threading.Event()

    def ingress_finalizer() -> None:
        before.remove_load_balancer("blue")
        ingress_gone.set()

    argocd.on_gone["sample-app"] = ingress_finalizer
    external_dns_removes_records_after(before, clock, 60, ingress_gone)
    teardown_of(before, argocd, clock).run()
    assert leftovers(before) == []
    assert clock.slept < PLAN.timeout_seconds / 2  # blue's records' 60 s, not the bounded wait's whole timeout
    blue_2 = colour_leftovers(
        route53=before.route53, elbv2=before.elbv2, ec2=before.ec2, zone=before.zone, colour="blue-2", cluster=cluster("blue-2")
    )
    assert len(blue_2) == 5  # its 2 records, load balancer, target group and security group, untouched
    assert before.weights() == {"blue-2": 100}


def test_what_outlives_the_bounded_wait_is_named_and_the_controllers_are_kept(before: Emulated, argocd: FakeKubernetes) -> None:
    argocd.on_gone["sample-app"] = lambda: None  # the controller is stuck: the ALB stays
    clock = FakeClock()
    with pytest.raises(TeardownError) as failure:
        teardown_of(before, argocd, clock, plan=dataclasses.replace(PLAN, timeout_seconds=120)).run()
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
    before: Emulated, argocd: FakeKubernetes
) -> None:
    twin = before.route53.create_hosted_zone(Name=ZONE_NAME, CallerReference="twin")["HostedZone"]["Id"]
    try:
        with pytest.raises(TeardownError, match=r"2 public hosted zones are named eks\.example\.com .*nothing of blue"):
            teardown_of(before, argocd, FakeClock()).run()
        assert argocd.events == []
    finally:
        before.route53.delete_hosted_zone(Id=twin)


def test_the_order_is_the_sync_waves_the_cluster_runs_not_the_checkouts_registry(
    before: Emulated, argocd: FakeKubernetes
) -> None:
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
    argocd.on_gone["shop"] = lambda: before.remove_everything("blue")  # the last Ingress: its ALB and records go
    seen_at_controller_delete: list[list[str]] = []
    argocd.on_delete["external-dns"] = lambda: seen_at_controller_delete.append(leftovers(before))

    teardown_of(before, argocd, FakeClock()).run()

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


def test_applications_without_the_resources_finalizer_are_left_and_named(before: Emulated, argocd: FakeKubernetes) -> None:
    """Deleting them would not remove what they installed (a workload's Ingress, its ALB): the teardown leaves
    them, whatever their wave, and says so; the cluster goes with them."""
    runs(argocd, {**RAN_BEFORE, "dashboard": 3}, unfinalized=("argo-cd", "dashboard"))
    argocd.add_application("metrics", wave=-3, finalizers=["example.com/other"])  # another finalizer only
    argocd.on_gone["sample-app"] = lambda: before.remove_everything("blue")
    teardown = teardown_of(before, argocd, FakeClock())
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


def test_the_finalizer_with_a_deletion_mode_cascades_too(before: Emulated, argocd: FakeKubernetes) -> None:
    """Argo CD's `resources-finalizer.argocd.argoproj.io/background` deletes what the app installed as the plain
    one does: such a workload must go before the wait, not be left to orphan its load balancer."""
    runs(argocd, RAN_BEFORE, unfinalized=("argo-cd",))
    argocd.add_application("shop", wave=2, finalizers=[f"{RESOURCES_FINALIZER}/background"])
    argocd.on_gone["sample-app"] = lambda: before.remove_everything("blue")
    teardown_of(before, argocd, FakeClock()).run()
    assert [e for e in argocd.events if e.startswith("delete")][:2] == [
        "delete shop (Foreground)",
        "delete sample-app (Foreground)",
    ]


@pytest.mark.parametrize("value", ["minus-one", "1.5", "", " 1", "1_0"])
def test_a_sync_wave_that_is_not_an_integer_stops_the_teardown_before_anything_changes(
    before: Emulated, argocd: FakeKubernetes, value: str
) -> None:
    argocd.add_application("cert-manager", wave=value)
    with pytest.raises(TeardownError) as failure:
        teardown_of(before, argocd, FakeClock()).run()
    assert str(failure.value) == (
        f"application cert-manager: its annotation argocd.argoproj.io/sync-wave is {value!r}, not an integer, so the "
        "order to delete the applications in is unknown. Fix it in the Git revision blue follows, let Argo CD sync it, "
        "then run `cdktf destroy blue` again; nothing of blue has been deleted"
    )
    assert argocd.events == []  # not even the parent's automated sync
    assert len(leftovers(before)) == 5


def test_a_plan_a_colour_was_deployed_with_before_still_runs_it(blue: Emulated, argocd: FakeKubernetes) -> None:
    """A colour deployed before the live weights were the only word on serving carries the config's weight in its
    plan (model/migrations: teardown-plan-weight): what a destroy hands the hook. It is ignored."""
    old = {**PLAN.to_json(), "weight": 100}
    plan = TeardownPlan.from_json(json.dumps(old))
    assert plan == PLAN
    teardown_of(blue, argocd, FakeClock(), plan=plan).run()
    assert sorted(argocd.application_names()) == ["app-of-apps", "argo-cd"]
    with pytest.raises(ValueError, match="a teardown plan has exactly the keys"):
        TeardownPlan.from_json(json.dumps({**old, "applications": []}))


@pytest.mark.parametrize("key", ["project", "hostname"])
def test_a_plan_of_a_colour_from_before_the_shared_load_balancer_is_refused(key: str) -> None:
    """Such a colour carried its own host and no project; it is retired with the release before this one
    (docs/upgrading.md), so a plan like it is no plan of this release's and runs nothing."""
    old = {k: v for k, v in PLAN.to_json().items() if k != "project"} if key == "project" else {**PLAN.to_json(), key: "app"}
    with pytest.raises(ValueError, match="a teardown plan has exactly the keys"):
        TeardownPlan.from_json(json.dumps(old))
