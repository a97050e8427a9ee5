"""Moving a deployment made before this release onto the shared load balancer, in the steps of docs/upgrading.md
("Moving to the shared load balancer"), against moto: after every step each public host is resolved as Route53
answers weighted records (only members of weight above 0 while any has one, else all of them), every answer is
followed to its load balancer, and that load balancer must send the host's requests to healthy targets. Never no
answer, never an answer that fails. At the end, nothing the old design made is left: its records, their TXT ownership
records, its load balancers."""

from __future__ import annotations

import io

import pytest

from model.routes import SET_IDENTIFIER
from tests.support.configs import validated
from tests.support.emulated_aws import (
    HOSTNAME,
    PROJECT,
    REGION,
    ZONE_NAME,
    Emulated,
    FakeClock,
    base_config,
    cluster,
    teardown_plan_of,
)
from tests.support.fake_kubernetes import FakeKubernetes
from tools.aws import Aws
from tools.hooks.teardown import Teardown
from tools.leftovers import colour_leftovers, fqdn, record_sets
from tools.live_routes import read_routes
from tools.shift.drain import Drain
from tools.traffic_lock import TrafficLock

PREVIEWS = [f"app-{colour}.{ZONE_NAME}" for colour in ("blue", "green")]


def answers(aws: Emulated, host: str) -> list[str]:
    """The load balancers Route53 may answer for host, as DNS names: the weighted members above 0 if there are any,
    else all of them (Route53: "If you set Weight to 0 for all the records in the group, traffic is routed to all
    resources with equal probability")."""
    members = [r for r in record_sets(aws.route53, aws.zone) if r["Name"] == fqdn(host) and r["Type"] == "A"]
    chosen = [m for m in members if int(m.get("Weight", 1)) > 0] or members
    return [m["AliasTarget"]["DNSName"].removeprefix("dualstack.").rstrip(".") for m in chosen]


def failure(aws: Emulated, host: str, dns_name: str) -> str | None:
    """Why the load balancer at dns_name would not serve host with a healthy target, or None when it would."""
    balancers = {lb["DNSName"]: lb for lb in aws.elbv2.describe_load_balancers()["LoadBalancers"]}
    balancer = balancers.get(dns_name)
    if balancer is None:
        return f"{host}: its record points at {dns_name}, which is no load balancer"
    if aws.shared and balancer["LoadBalancerArn"] == aws.shared.load_balancer_arn:
        routes = read_routes(aws.elbv2, PROJECT)
        app = {f"app.{ZONE_NAME}": "sample-app"}.get(host)
        if app is None:  # a preview host: its rule forwards to one colour
            colour = host.split(".")[0].removeprefix("app-")
            groups = [routes.target_groups[("sample-app", colour)]]
        else:
            route = routes.public[app]
            groups = [route.target_groups[c] for c, weight in route.weights.items() if weight > 0]
            if not groups:
                return f"{host}: the shared load balancer's rule forwards to no colour"
    else:
        listener = aws.elbv2.describe_listeners(LoadBalancerArn=balancer["LoadBalancerArn"])["Listeners"][0]
        groups = [listener["DefaultActions"][0]["TargetGroupArn"]]
    for group in groups:
        health = aws.elbv2.describe_target_health(TargetGroupArn=group)["TargetHealthDescriptions"]
        if not any(t["TargetHealth"]["State"] == "healthy" for t in health):
            return f"{host}: {dns_name} sends it to {group.rsplit(':', 1)[1]}, which has no healthy target"
    return None


def resolved(aws: Emulated, hosts: list[str]) -> dict[str, list[str]]:
    """Every host's possible answers; fails the test on a host without an answer or with one that would fail."""
    found = {}
    for host in hosts:
        possible = answers(aws, host)
        assert possible, f"{host}: no answer"
        problems = [p for dns_name in possible if (p := failure(aws, host, dns_name))]
        assert not problems, problems
        found[host] = possible
    return found


def shared_records(aws: Emulated, weight: int) -> None:
    """What `cdktf deploy traffic` writes (stacks/traffic.py): each host a weighted member aliasing the shared load
    balancer, at traffic.record_weight."""
    assert aws.shared is not None
    (balancer,) = aws.elbv2.describe_load_balancers(LoadBalancerArns=[aws.shared.load_balancer_arn])["LoadBalancers"]
    alias = {"HostedZoneId": balancer["CanonicalHostedZoneId"], "DNSName": balancer["DNSName"], "EvaluateTargetHealth": False}
    member = {"SetIdentifier": SET_IDENTIFIER, "Weight": weight}
    changes = [
        {"Action": "UPSERT", "ResourceRecordSet": {"Name": host, "Type": "A", "AliasTarget": alias, **member}}
        for host in (HOSTNAME, *PREVIEWS)
    ]
    aws.route53.change_resource_record_sets(HostedZoneId=aws.zone, ChangeBatch={"Changes": changes})


def clients(aws: Emulated, argocd: FakeKubernetes) -> Aws:
    names = ("route53", "elbv2", "ec2", "eks", "ssm", "sts")
    return Aws(REGION, kube=lambda _: argocd.api(), **{name: getattr(aws, name) for name in names})


def external_dns(aws: Emulated, colour: str, weight: int) -> None:
    """What a colour's ExternalDNS of the release before wrote: the public host and its own preview host, both in the
    colour's weighted set at its weight, aliasing its own load balancer (with the TXT ownership record)."""
    aws.write_records(colour, weight)
    footprint = aws.footprints[colour]
    alias = {"HostedZoneId": footprint.alb_zone, "DNSName": f"dualstack.{footprint.alb_dns}", "EvaluateTargetHealth": True}
    preview = {"Name": f"app-{colour}.{ZONE_NAME}", "Type": "A", "SetIdentifier": colour, "Weight": weight, "AliasTarget": alias}
    aws.route53.change_resource_record_sets(
        HostedZoneId=aws.zone, ChangeBatch={"Changes": [{"Action": "UPSERT", "ResourceRecordSet": preview}]}
    )


@pytest.fixture
def before(emulated: Emulated) -> Emulated:
    """The deployment as the release before left it: blue serves through its own load balancer and its ExternalDNS's
    weighted records, green stands beside it at weight 0 (the same, its own)."""
    for colour, weight in (("blue", 100), ("green", 0)):
        emulated.deploy_cluster(colour)
        emulated.make_load_balancer(colour)
        external_dns(emulated, colour, weight)
    return emulated


def test_every_step_of_the_move_answers_every_host_and_the_old_design_is_gone_at_the_end(
    before: Emulated, argocd: FakeKubernetes
) -> None:
    aws, hosts = before, [HOSTNAME, *PREVIEWS]
    old = {colour: aws.footprints[colour].alb_dns for colour in ("blue", "green")}
    assert resolved(aws, hosts)[HOSTNAME] == [old["blue"]]

    # 1-2. `cdktf deploy common`, then `cdktf deploy traffic` with traffic.record_weight 0: the shared load balancer,
    # its target groups (empty yet), its rules at the configured weights, its records beside ExternalDNS's.
    shared = aws.deploy_traffic({"sample-app": "app"}, {"blue": 100, "green": 0})
    shared_records(aws, 0)
    (balancer,) = aws.elbv2.describe_load_balancers(LoadBalancerArns=[shared.load_balancer_arn])["LoadBalancers"]
    shared_dns = balancer["DNSName"]
    assert resolved(aws, [HOSTNAME])[HOSTNAME] == [old["blue"]]  # blue's record has weight: ours (0) is never answered
    # Until step 3 a colour at weight 0 may be answered from either path on its preview host (every member at 0 is
    # answered), and the shared one has no pods of it yet: docs/upgrading.md runs step 3 right after, and users never
    # see it (their host is blue's). Answered it is.
    assert all(answers(aws, host) for host in PREVIEWS)

    # 3. `cdktf deploy blue` and `green` with their legacy_application: Terraform's TargetGroupBinding puts each
    # colour's pods into its target groups of the shared load balancer, beside its own load balancer.
    aws.register_pods("blue")
    aws.register_pods("green")
    resolved(aws, hosts)

    # 4. traffic.record_weight 1, `cdktf deploy traffic`: a share of the answers is the shared load balancer's, which
    # sends it to blue's pods (its rules: blue 100).
    shared_records(aws, 1)
    assert sorted(resolved(aws, hosts)[HOSTNAME]) == sorted([old["blue"], shared_dns])

    # 5. Both colours' weight 0 (their ExternalDNS records'), `cdktf deploy blue green`: every answer is the shared
    # load balancer's.
    external_dns(aws, "blue", 0)
    external_dns(aws, "green", 0)
    assert resolved(aws, hosts)[HOSTNAME] == [shared_dns]

    # 6. A colour of this release (teal) joins, is proven, and takes the traffic: here at once.
    aws.deploy_cluster("teal")
    teal = aws.add_colour("teal")["sample-app"]
    aws.register_pods("teal")
    lock = TrafficLock(aws.ssm, aws.sts, PROJECT, "python -m tools.shift --to teal --now", FakeClock())
    config = validated(
        base_config(
            blue={"kubernetes_version": "1.35", "weight": 0, "legacy_application": "sample-app"},
            green={"kubernetes_version": "1.36", "weight": 0, "legacy_application": "sample-app"},
            teal={"kubernetes_version": "1.36", "weight": 100},
        )
    )
    Drain(config, clients(aws, argocd), io.StringIO(), lock).run("teal")
    assert read_routes(aws.elbv2, PROJECT).public["sample-app"].target_groups["teal"] == teal
    assert read_routes(aws.elbv2, PROJECT).public["sample-app"].weights == {"blue": 0, "green": 0, "teal": 100}
    resolved(aws, [HOSTNAME])

    # 7. Retire blue and green (`python -m tools.retire <colour>`): their teardown deletes their application, whose
    # Ingress takes their own load balancer, and ExternalDNS their records and TXT ownership records.
    for colour in ("blue", "green"):
        retire(aws, argocd, colour)
        resolved(aws, [HOSTNAME])
    for colour in ("blue", "green"):
        assert (
            colour_leftovers(
                route53=aws.route53, elbv2=aws.elbv2, ec2=aws.ec2, zone=aws.zone, colour=colour, cluster=cluster(colour)
            )
            == []
        )
    left = {(r["Type"], r.get("SetIdentifier")) for r in record_sets(aws.route53, aws.zone) if r["Type"] not in ("NS", "SOA")}
    assert left == {("A", SET_IDENTIFIER)}  # only the shared load balancer's records
    assert [lb["LoadBalancerName"] for lb in aws.elbv2.describe_load_balancers()["LoadBalancers"]] == ["eks-bg-traffic"]


def retire(aws: Emulated, argocd: FakeKubernetes, colour: str) -> None:
    """The colour's teardown hook, as `cdktf destroy <colour>` runs it: its cluster runs the release before's
    applications and Terraform's binding; the controllers clean up as they would."""
    for name in argocd.application_names():
        argocd.remove_application(name)
    argocd.add_application("app-of-apps")
    for name, wave in (("argo-cd", -2), ("aws-load-balancer-controller", -1), ("external-dns", 0), ("sample-app", 1)):
        argocd.add_application(name, wave=wave, finalizers=[] if name == "argo-cd" else None)
    argocd.add_binding("sample-app", "sample-app")

    def app_gone() -> None:
        """The application's Ingress finalizer (the controller deletes its load balancer; ExternalDNS then its records),
        and the binding's (its targets out of the shared target groups). The fake calls this for both: they share
        the name, `sample-app`."""
        if colour in aws.footprints:
            aws.remove_load_balancer(colour)
            aws.remove_records(colour)
        aws.deregister_pods(colour)

    argocd.on_gone["sample-app"] = app_gone
    Teardown(plan=teardown_plan_of(colour), aws=clients(aws, argocd), clock=FakeClock(), out=io.StringIO()).run()
