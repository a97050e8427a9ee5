"""The project's AWS in moto, and stand-ins for what makes and removes it.

The traffic stack's shared load balancer (as stacks/traffic.py makes it: the names and tags of model/routes.py), and
what a colour's load balancer controller does with it: registering its pods in its target groups; ALB metrics per
target group, as CloudWatch would hold them. And what a colour made before the shared load balancer, as ExternalDNS and
the controller made it: weighted alias + TXT ownership records, an ALB with its target group and security group.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from model.routes import (
    APPLICATION_TAG,
    COLOUR_TAG,
    PREVIEW,
    PUBLIC,
    ROUTE_TAG,
    load_balancer_name,
    rule_priorities,
    target_group_name,
    weights_parameter,
)
from model.teardown_plan import TeardownPlan
from scripts.emulator import PERCENTILE, nearest_rank
from tests.support.configs import SAMPLE_APPLICATIONS, named_release
from tools.leftovers import LBC_CLUSTER_TAG, record_sets
from tools.live_routes import LiveRoutes, every, write_rules
from tools.live_weights import LiveWeights, parse
from tools.shift.metrics import dimension

REGION = "ap-northeast-1"
ZONE_NAME = "eks.example.com"
HOSTNAME = f"app.{ZONE_NAME}"
PROJECT = "eks-bg"
# The most TargetResponseTime samples a simulated minute puts (_metric_data).
SAMPLES = 100
METRIC_DATA_PER_CALL = 1000  # PutMetricData's limit


def cluster(colour: str) -> str:
    return f"{PROJECT}-{colour}"


def teardown_plan_of(colour: str) -> TeardownPlan:
    """What a colour of the emulated project carries in its state for its teardown."""
    return TeardownPlan(
        colour=colour,
        cluster=cluster(colour),
        region=REGION,
        zone_name=ZONE_NAME,
        argocd_namespace="argocd",
        parent_application="app-of-apps",
        timeout_seconds=600,
        project=PROJECT,
    )


def base_config(*, applications: dict[str, Any] | None = None, **clusters: dict[str, Any]) -> dict[str, Any]:
    """A config whose names match this module's: project eks-bg, zone eks.example.com, the sample app at host `app`
    unless applications says otherwise. Each colour names its whole release, as colours that take turns serving do
    (model/config/)."""
    apps = SAMPLE_APPLICATIONS if applications is None else applications
    release = named_release(
        applications={name: {"image_tag": app["image"]["tag"]} if "image" in app else {} for name, app in apps.items()}
    )
    for name, app in apps.items():
        if "repo_url" in app["source"]:
            release["applications"][name]["revision"] = app["source"]["revision"]
    return {
        "project": PROJECT,
        "region": REGION,
        "dns": {"parent_zone": "example.com", "sub_domain": "eks"},
        "applications": apps,
        "clusters": {colour: {**copy.deepcopy(release), **cluster} for colour, cluster in clusters.items()},
    }


@dataclass
class Footprint:
    alb_arn: str
    alb_dns: str
    alb_zone: str
    target_group_arn: str
    security_group_id: str


SERVICES = ("route53", "elbv2", "ec2", "eks", "cloudwatch", "ssm", "sts", "acm")


@dataclass
class Emulated:
    """Clients on moto (made once per module: clients and moto's backends are slow to create),
    and one test's world in it: the sub-zone, a VPC, and the colours' footprints. `clean`
    removes that world again, so the next test starts from nothing."""

    route53: Any
    elbv2: Any
    ec2: Any
    eks: Any
    cloudwatch: Any
    ssm: Any
    sts: Any
    acm: Any
    zone: str = ""
    footprints: dict[str, Footprint] = field(default_factory=dict)
    clusters: list[str] = field(default_factory=list)
    shared: SharedLoadBalancer | None = None

    @classmethod
    def connect(cls) -> Emulated:
        return cls(*(boto3.client(name, region_name=REGION) for name in SERVICES))

    def another_process(self) -> Emulated:
        """The same world through clients of their own, as another process of the operator would have them (a lock's
        fencing hooks live on the clients of the run that holds it)."""
        return dataclasses.replace(self, **{name: boto3.client(name, region_name=REGION) for name in SERVICES})

    def fresh(self) -> Emulated:
        """A new, empty world on the same clients."""
        return Emulated(*(getattr(self, name) for name in SERVICES)).build()

    def build(self) -> Emulated:
        created = self.route53.create_hosted_zone(Name=ZONE_NAME, CallerReference=uuid.uuid4().hex)
        self.zone = created["HostedZone"]["Id"].rsplit("/", 1)[-1]
        vpc = self.ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        self.vpc = vpc
        self.subnets = [
            self.ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i}.0/24", AvailabilityZone=f"{REGION}{az}")["Subnet"]["SubnetId"]
            for i, az in enumerate("ac")
        ]
        return self

    def clean(self) -> None:
        """Forget the world: the emulated services' state is reset (moto's own reset, cheaper than deleting each
        thing through the API), so the next test starts from nothing."""
        from moto.backends import get_backend

        for service in SERVICES:
            get_backend(service).reset()
        self.footprints, self.clusters, self.shared = {}, [], None

    def deploy_cluster(self, colour: str, version: str | None = None) -> None:
        self.eks.create_cluster(
            name=cluster(colour),
            roleArn="arn:aws:iam::123456789012:role/cluster",
            resourcesVpcConfig={"subnetIds": self.subnets},
            **({"version": version} if version else {}),
        )
        self.clusters.append(cluster(colour))

    def deploy_traffic(self, applications: dict[str, str], weights: dict[str, int]) -> SharedLoadBalancer:
        """The traffic stack, deployed: the shared load balancer with an HTTPS listener, a target group per application
        (application -> host label) and colour of weights, each application's public rule forwarding at those weights and
        a preview rule per colour, and the weights parameter. Names and tags as stacks/traffic.py gives them."""
        group = self.ec2.create_security_group(GroupName="eks-bg-alb", Description="shared", VpcId=self.vpc)["GroupId"]
        balancer = self.elbv2.create_load_balancer(
            Name=load_balancer_name(PROJECT), Subnets=self.subnets, SecurityGroups=[group], Scheme="internet-facing"
        )["LoadBalancers"][0]
        certificate = self.acm.request_certificate(DomainName=f"*.{ZONE_NAME}", ValidationMethod="DNS")["CertificateArn"]
        listener = self.elbv2.create_listener(
            LoadBalancerArn=balancer["LoadBalancerArn"],
            Protocol="HTTPS",
            Port=443,
            Certificates=[{"CertificateArn": certificate}],
            DefaultActions=[{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "404"}}],
        )["Listeners"][0]["ListenerArn"]
        hosts = {app: f"{host}.{ZONE_NAME}" for app, host in applications.items()}
        previews = {(app, c): f"{host}-{c}.{ZONE_NAME}" for app, host in applications.items() for c in weights}
        priorities = rule_priorities([*hosts.values(), *previews.values()])
        shared = SharedLoadBalancer(balancer["LoadBalancerArn"], listener, {}, dict(applications), priorities)
        for app in applications:
            for colour in weights:
                tags = [{"Key": APPLICATION_TAG, "Value": app}, {"Key": COLOUR_TAG, "Value": colour}]
                shared.target_groups[(app, colour)] = self.elbv2.create_target_group(
                    Name=target_group_name(PROJECT, app, colour),
                    Protocol="HTTP",
                    Port=80,
                    VpcId=self.vpc,
                    TargetType="ip",
                    Tags=tags,
                )["TargetGroups"][0]["TargetGroupArn"]
            forward = [{"TargetGroupArn": shared.target_groups[(app, c)], "Weight": w} for c, w in weights.items()]
            self._rule(listener, priorities[hosts[app]], hosts[app], {"TargetGroups": forward}, app, PUBLIC)
            for colour in weights:
                single = {"TargetGroups": [{"TargetGroupArn": shared.target_groups[(app, colour)], "Weight": 1}]}
                self._rule(listener, priorities[previews[(app, colour)]], previews[(app, colour)], single, app, PREVIEW, colour)
        self.ssm.put_parameter(Name=weights_parameter(PROJECT), Value=json.dumps(weights), Type="String")
        self.shared = shared
        return shared

    def _rule(
        self, listener: str, priority: int, host: str, forward: dict[str, Any], app: str, route: str, colour: str = ""
    ) -> None:
        tags = [{"Key": APPLICATION_TAG, "Value": app}, {"Key": ROUTE_TAG, "Value": route}]
        tags += [{"Key": COLOUR_TAG, "Value": colour}] if colour else []
        self.elbv2.create_rule(
            ListenerArn=listener,
            Priority=priority,
            Conditions=[{"Field": "host-header", "HostHeaderConfig": {"Values": [host]}}],
            Actions=[{"Type": "forward", "ForwardConfig": forward}],
            Tags=tags,
        )

    def add_colour(self, colour: str) -> dict[str, str]:
        """`cdktf deploy traffic` with a colour more: its target groups and preview rules (the weighted rules are the
        shift's: they name it once weight moves). Returns its target groups by application."""
        assert self.shared is not None
        made = {}
        for app, host in self.shared.applications.items():
            tags = [{"Key": APPLICATION_TAG, "Value": app}, {"Key": COLOUR_TAG, "Value": colour}]
            arn = self.elbv2.create_target_group(
                Name=target_group_name(PROJECT, app, colour), Protocol="HTTP", Port=80, VpcId=self.vpc, TargetType="ip", Tags=tags
            )["TargetGroups"][0]["TargetGroupArn"]
            self.shared.target_groups[(app, colour)] = made[app] = arn
            preview = f"{host}-{colour}.{ZONE_NAME}"
            priority = max(self.shared.priorities.values()) + 1
            self.shared.priorities[preview] = priority
            single = {"TargetGroups": [{"TargetGroupArn": arn, "Weight": 1}]}
            self._rule(self.shared.listener_arn, priority, preview, single, app, PREVIEW, colour)
        return made

    def register_pods(self, colour: str, *applications: str) -> None:
        """What the colour's load balancer controller does for its TargetGroupBindings: its pods into its target groups
        (moto reads a registered target as healthy)."""
        assert self.shared is not None
        for (app, owner), arn in self.shared.target_groups.items():
            if owner == colour and (not applications or app in applications):
                self.elbv2.register_targets(TargetGroupArn=arn, Targets=[{"Id": "10.0.1.10", "Port": 8080}])

    def deregister_pods(self, colour: str, *applications: str) -> None:
        assert self.shared is not None
        for (app, owner), arn in self.shared.target_groups.items():
            if owner == colour and (not applications or app in applications):
                targets = self.elbv2.describe_target_health(TargetGroupArn=arn)["TargetHealthDescriptions"]
                if targets:
                    self.elbv2.deregister_targets(TargetGroupArn=arn, Targets=[t["Target"] for t in targets])

    def forwarded(self) -> dict[str, dict[str, int]]:
        """What each application's public rule forwards, by application then colour, as the load balancer holds it.

        The worlds read it every simulated minute, so it is one DescribeRules call on the listener: the public rules
        found by their host, the colours by the target groups this world made (SharedLoadBalancer), not the six calls
        of the shift's own read_routes, which finds them by tags (its DescribeTags and moto's XML for them were a
        quarter of the shift tests' time)."""
        from tools.live_routes import read_routes

        if self.shared is None:
            return read_routes(self.elbv2, PROJECT).weights()
        application_of = {f"{label}.{ZONE_NAME}": app for app, label in self.shared.applications.items()}
        colour_of = {arn: colour for (_, colour), arn in self.shared.target_groups.items()}
        found: dict[str, dict[str, int]] = {}
        for page in self.elbv2.get_paginator("describe_rules").paginate(ListenerArn=self.shared.listener_arn):
            for rule in page["Rules"]:
                hosts = [v for c in rule["Conditions"] if c["Field"] == "host-header" for v in c["HostHeaderConfig"]["Values"]]
                app = next((application_of[host] for host in hosts if host in application_of), None)
                forward = next((a for a in rule["Actions"] if a["Type"] == "forward"), None)
                if app is None or forward is None:
                    continue
                groups = [g for g in forward.get("ForwardConfig", {}).get("TargetGroups", []) if g["TargetGroupArn"] in colour_of]
                found[app] = {colour_of[g["TargetGroupArn"]]: int(g.get("Weight", 1)) for g in groups}
        return found

    def live_weights(self) -> dict[str, int]:
        """Each colour's live weight (the most any application gives it), as the guards read it."""
        return self.live().colours

    def live(self) -> LiveWeights:
        """The weights parameter as the shift reads it (each application's split)."""
        name = weights_parameter(PROJECT)
        return parse(name, self.ssm.get_parameter(Name=name)["Parameter"]["Value"])

    def put_app_traffic(
        self, colour: str, app: str, at: datetime, requests: int, errors: int, p99: float, *, connection_errors: int = 0
    ) -> None:
        """One minute of an application's metrics in a colour: its target group of the shared load balancer, as the ALB
        publishes them (dimensions in the order the shift asks for them: moto matches them in order). errors: the
        targets' 5xx; connection_errors: connections the load balancer could not open to them."""
        self.put_traffic(self.app_traffic(colour, app, at, requests, errors, p99, connection_errors=connection_errors))

    def app_traffic(
        self, colour: str, app: str, at: datetime, requests: int, errors: int, p99: float, *, connection_errors: int = 0
    ) -> list[dict[str, Any]]:
        """put_app_traffic's data, for put_traffic to send with others (a world's minute of every application)."""
        assert self.shared is not None
        dimensions = [
            {"Name": "TargetGroup", "Value": dimension(self.shared.target_groups[(app, colour)])},
            {"Name": "LoadBalancer", "Value": dimension(self.shared.load_balancer_arn)},
        ]
        return self._metric_data(dimensions, at, requests, errors, p99, connection_errors)

    def put_traffic(self, data: list[dict[str, Any]]) -> None:
        """Metric data of the load balancer in as few PutMetricData calls as AWS's limit allows."""
        for first in range(0, len(data), METRIC_DATA_PER_CALL):
            self.cloudwatch.put_metric_data(Namespace="AWS/ApplicationELB", MetricData=data[first : first + METRIC_DATA_PER_CALL])

    def make_load_balancer(self, colour: str) -> Footprint:
        """What the load balancer controller makes for the sample app's Ingress."""
        tags = [
            {"Key": LBC_CLUSTER_TAG, "Value": cluster(colour)},
            {"Key": "ingress.k8s.aws/stack", "Value": "sample-app/sample-app"},
        ]
        group = self.ec2.create_security_group(
            GroupName=f"k8s-{colour}-sampleapp",
            Description="managed by the load balancer controller",
            VpcId=self.vpc,
            TagSpecifications=[{"ResourceType": "security-group", "Tags": tags}],
        )["GroupId"]
        lb = self.elbv2.create_load_balancer(
            Name=f"k8s-sampleapp-{colour}", Subnets=self.subnets, SecurityGroups=[group], Scheme="internet-facing", Tags=tags
        )["LoadBalancers"][0]
        target_group = self.elbv2.create_target_group(
            Name=f"k8s-sampleapp-{colour}", Protocol="HTTP", Port=8080, VpcId=self.vpc, TargetType="ip", Tags=tags
        )["TargetGroups"][0]["TargetGroupArn"]
        # The Ingress's listener forwards to the app's target group, whose pods pass their health checks.
        self.elbv2.create_listener(
            LoadBalancerArn=lb["LoadBalancerArn"],
            Protocol="HTTP",
            Port=80,
            DefaultActions=[{"Type": "forward", "TargetGroupArn": target_group}],
        )
        self.elbv2.register_targets(TargetGroupArn=target_group, Targets=[{"Id": "10.0.1.10", "Port": 8080}])
        footprint = Footprint(lb["LoadBalancerArn"], lb["DNSName"], lb["CanonicalHostedZoneId"], target_group, group)
        self.footprints[colour] = footprint
        return footprint

    def remove_load_balancer(self, colour: str) -> None:
        """What the load balancer controller does when the Ingress goes."""
        footprint = self.footprints.pop(colour)
        self.elbv2.delete_load_balancer(LoadBalancerArn=footprint.alb_arn)
        self.elbv2.delete_target_group(TargetGroupArn=footprint.target_group_arn)
        self.ec2.delete_security_group(GroupId=footprint.security_group_id)

    def remove_everything(self, colour: str) -> None:
        """Both controllers' clean-up at once: load balancer, then records."""
        self.remove_load_balancer(colour)
        self.remove_records(colour)

    def write_records(self, colour: str, weight: int) -> None:
        """What ExternalDNS writes for the colour's Ingress: the weighted alias and its TXT owner record."""
        footprint = self.footprints[colour]
        owner = (
            f'"heritage=external-dns,external-dns/owner={cluster(colour)},external-dns/resource=ingress/sample-app/sample-app"'
        )
        alias = {"HostedZoneId": footprint.alb_zone, "DNSName": f"dualstack.{footprint.alb_dns}", "EvaluateTargetHealth": True}
        common = {"SetIdentifier": colour, "Weight": weight}
        self._change(
            "UPSERT",
            [
                {"Name": HOSTNAME, "Type": "A", "AliasTarget": alias, **common},
                {"Name": f"a-{HOSTNAME}", "Type": "TXT", "TTL": 300, "ResourceRecords": [{"Value": owner}], **common},
            ],
        )

    def remove_records(self, colour: str) -> None:
        """What ExternalDNS (policy sync) does once the colour's Ingress is gone."""
        mine = [r for r in record_sets(self.route53, self.zone) if r.get("SetIdentifier") == colour]
        if mine:
            self._change("DELETE", mine)

    def weights(self) -> dict[str, int]:
        return {
            r["SetIdentifier"]: int(r["Weight"])
            for r in record_sets(self.route53, self.zone)
            if r["Type"] == "A" and r.get("SetIdentifier")
        }

    def _metric_data(
        self, dimensions: list[dict[str, str]], at: datetime, requests: int, errors: int, p99: float, connection_errors: int = 0
    ) -> list[dict[str, Any]]:
        fast = requests - math.ceil(requests / 50)
        data: list[dict[str, Any]] = [
            {"MetricName": "RequestCount", "Value": requests},
            {"MetricName": "HTTPCode_Target_5XX_Count", "Value": errors},
            {"MetricName": "TargetConnectionErrorCount", "Value": connection_errors},
        ]
        if requests:
            # 98 % of the requests are fast; the slowest 2 % take `p99` seconds, so the 99th percentile is p99. moto keeps
            # a datum per count and scans them all for every query and period, so a minute of more than SAMPLES requests
            # is SAMPLES samples, 2 or more of them slow: still over 1 %, so the 99th percentile is still p99 (a minute at
            # weight 100 was 1,000 data, most of a shift test's time).
            slow = requests - fast
            if requests > SAMPLES:
                slow = max(1, round(SAMPLES * slow / requests))
                fast = SAMPLES - slow
            data.append({"MetricName": "TargetResponseTime", "Values": [0.05, p99], "Counts": [fast, slow]})
        for datum in data:
            datum.update(Dimensions=dimensions, Timestamp=at, Unit="Count" if "Count" in datum["MetricName"] else "Seconds")
        return data

    def _change(self, action: str, records: list[dict[str, Any]]) -> None:
        changes = [{"Action": action, "ResourceRecordSet": record} for record in records]
        self.route53.change_resource_record_sets(HostedZoneId=self.zone, ChangeBatch={"Changes": changes})


@dataclass
class SharedLoadBalancer:
    load_balancer_arn: str
    listener_arn: str
    target_groups: dict[tuple[str, str], str]  # (application, colour) -> ARN
    applications: dict[str, str]  # application -> host label
    priorities: dict[str, int]  # host -> its rule's priority


@dataclass
class FakeClock:
    """Time that passes only when the code under test sleeps; each sleep lets the world move."""

    # A whole minute, three hours ago: CloudWatch takes datapoints from the past two weeks.
    now_: datetime = field(default_factory=lambda: datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=3))
    on_sleep: list[Callable[[datetime, datetime], None]] = field(default_factory=list)
    slept: float = 0

    def now(self) -> datetime:
        return self.now_

    def sleep(self, seconds: float) -> None:
        before, self.now_ = self.now_, self.now_ + timedelta(seconds=seconds)
        self.slept += seconds
        for hook in self.on_sleep:
            hook(before, self.now_)


def minutes(start: datetime, end: datetime) -> Iterator[datetime]:
    """The whole minutes in [start, end): each gets one datapoint."""
    minute = start.replace(second=0, microsecond=0)
    if minute < start:
        minute += timedelta(minutes=1)
    while minute < end:
        yield minute
        minute += timedelta(minutes=1)


@contextmanager
def in_process_aws(patch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto in this process (`mock_aws`), the one way an in-process test emulates AWS (code under test in other
    processes reaches scripts/emulator.py's server instead): no endpoint or profile of the machine's, one boto3
    Session for moto's EKS (`one_boto3_session_for_moto`), and none of moto's ~11,000 default AMIs (no test here starts
    an instance: they would only cost set-up time). patch: undone by its owner, after the emulation has ended."""
    from moto import mock_aws

    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        patch.delenv(name, raising=False)
    one_boto3_session_for_moto(patch)
    patch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    with mock_aws():
        yield


def one_boto3_session_for_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's EKS checks every CreateCluster's role ARN against the partitions of a brand-new
    boto3 Session, which parses botocore's endpoint data again (~0.15 s a cluster, most of a
    world's set-up). The partitions never change within a run: one Session answers them all."""
    import moto.eks.utils

    monkeypatch.setattr(moto.eks.utils, "Session", functools.cache(boto3.Session))


def one_key_for_moto_certificates(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's ACM makes a new 2048-bit RSA key for every RequestCertificate and loads it back, checking it (~70 ms; a
    traffic world requests one): one key, loaded once, serves every emulated certificate (nothing here reads a key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    monkeypatch.setattr(rsa, "generate_private_key", functools.cache(rsa.generate_private_key))
    monkeypatch.setattr(serialization, "load_pem_private_key", functools.cache(serialization.load_pem_private_key))


def teach_percentiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """moto 5.2 answers only Sum/Average/Minimum/Maximum/SampleCount; teach it nearest-rank
    percentiles (pNN), which CloudWatch computes for TargetResponseTime p99 (as the emulator's server does)."""
    from moto.cloudwatch.models import Statistics

    original = Statistics.get_statistics_for_type

    def with_percentiles(self: Any, stat: str) -> Any:
        return nearest_rank(self.metric_single_values_list, stat) if PERCENTILE.fullmatch(stat) else original(self, stat)

    monkeypatch.setattr(Statistics, "get_statistics_for_type", with_percentiles)


class WithInsights:
    """moto's EKS with what it answers "Not yet implemented" to: upgrade insights (ListInsights), their on-demand
    refresh (StartInsightsRefresh, DescribeInsightsRefresh) and a cluster's updates (ListUpdates, DescribeUpdate),
    served from what a test sets; every other call goes to moto.

    A refresh asked for starts now (AWS's time, as moto stamps a cluster's creation) and completes after
    `refresh_polls` readings (or fails with `refresh_failure`); `refresh_denied` makes StartInsightsRefresh answer
    AccessDeniedException."""

    def __init__(self, eks: Any) -> None:
        self._eks = eks
        self.insights: dict[str, list[dict[str, Any]]] = {}
        self.updates: dict[str, list[datetime]] = {}  # cluster -> when each update was made
        self.refresh_polls = 1
        self.refresh_failure = ""
        self.refresh_denied = False
        self.refreshes: dict[str, dict[str, Any]] = {}  # cluster -> the latest refresh, as DescribeInsightsRefresh says

    def list_insights(self, *, clusterName: str, filter: dict[str, list[str]], **_: Any) -> dict[str, Any]:  # noqa: N803
        wanted = filter.get("statuses") or ["PASSING", "WARNING", "ERROR", "UNKNOWN"]
        found = [i for i in self.insights.get(clusterName, []) if i["insightStatus"]["status"] in wanted]
        return {"insights": found}

    def start_insights_refresh(self, *, clusterName: str) -> dict[str, Any]:  # noqa: N803
        if self.refresh_denied:
            message = (
                f"User: arn:aws:iam::123456789012:user/ci is not authorized to perform: eks:StartInsightsRefresh on {clusterName}"
            )
            raise aws_error("AccessDeniedException", "StartInsightsRefresh", message)
        started = datetime.now(UTC)
        self.refreshes[clusterName] = {"status": "IN_PROGRESS", "startedAt": started, "polls": self.refresh_polls}
        return {"status": "IN_PROGRESS", "message": ""}

    def describe_insights_refresh(self, *, clusterName: str) -> dict[str, Any]:  # noqa: N803
        refresh = self.refreshes.get(clusterName)
        if refresh is None:
            return {"status": "COMPLETED", "message": "", "startedAt": datetime(2026, 1, 1, tzinfo=UTC)}
        refresh["polls"] -= 1
        if refresh["polls"] <= 0 and refresh["status"] == "IN_PROGRESS":
            refresh["status"] = "FAILED" if self.refresh_failure else "COMPLETED"
        return {"status": refresh["status"], "message": self.refresh_failure, "startedAt": refresh["startedAt"]}

    def list_updates(self, *, name: str, **_: Any) -> dict[str, Any]:
        return {"updateIds": [f"{name}-{i}" for i in range(len(self.updates.get(name, [])))]}

    def describe_update(self, *, name: str, updateId: str) -> dict[str, Any]:  # noqa: N803
        made = self.updates[name][int(updateId.rsplit("-", 1)[1])]
        return {"update": {"id": updateId, "status": "Successful", "type": "VersionUpdate", "createdAt": made}}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._eks, name)


def insight(name: str, status: str) -> dict[str, Any]:
    """An insight summary as EKS lists it."""
    return {"id": name, "name": name, "category": "UPGRADE_READINESS", "insightStatus": {"status": status, "reason": ""}}


CREDENTIAL_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")


def without_credentials(env: dict[str, str], home: Path) -> dict[str, str]:
    """An environment in which botocore's chain finds nothing: no keys, no profile, no files, no instance metadata."""
    found = {k: v for k, v in env.items() if k not in CREDENTIAL_VARIABLES and not k.startswith("AWS_CONTAINER_")}
    return {
        **found,
        "AWS_CONFIG_FILE": str(home / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


EXPIRED = ("ExpiredToken", "The security token included in the request is expired")


def aws_error(code: str, operation: str, message: str) -> Exception:
    """The error botocore raises when AWS answers an operation with this error code (a real ClientError)."""
    from botocore.exceptions import ClientError

    error: Exception = ClientError({"Error": {"Code": code, "Message": message}}, operation)
    return error


def forward_all(elbv2: Any, routes: LiveRoutes, weights: Mapping[str, int], **given: Any) -> int:
    """Every application's public rule forwarding at the same split, as a shift from before per-application weights
    (or a test's half-done change) left them."""
    return write_rules(elbv2, routes, every(routes, weights), **given)
