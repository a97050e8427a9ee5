"""The AWS emulator (moto's server) for `make rehearse` and the tests: a server process, its
credentials, the AWS settings that aim the SDKs and Terraform at it, and boto3 clients on it.

With `iam=True` the server can enforce IAM (moto's own authorization: `enforce_iam()` turns it on once the
set-up is done) and records every call it authorizes or refuses, by caller, in a log: `make rehearse` and
the rehearsal tier deploy common as an identity that holds only the deployer policy (policies/deployer.py).

    python -m scripts.emulator --port 5000 [--host 127.0.0.1] [--iam]

With `kube_api_settings(url, authority)` among its settings the server answers EKS as a colour's commands meet it
(`_patch_moto_eks`): every cluster's endpoint is `<url>/<cluster name>` with that certificate authority, so the real
Kubernetes client (tools/kube.py) reaches a fake API of the test's (tests/support/fake_clusters.py), and what the aws
provider reads back of a colour is what it created.

A server started from here never races for its port: the parent binds a listening socket on a port the
kernel chooses (`listening_socket`) and hands its descriptor to the server process, which serves on it
(`--fd`). A port picked, released and bound again later could be taken in between by another of the test
processes that start emulators side by side (seen in CI: "moto server ... did not start").
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import boto3

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# The server appends one line per call it judged, `<allowed|denied> <caller ARN> <service:Action>`, to this file.
ACTION_LOG_ENV = "EMULATOR_ACTION_LOG"
BODILESS = ("GET", "HEAD", "DELETE")
# How long a server may take to serve once started: importing moto takes ~2 s on a quiet host; 24 starts at once
# beside six busy loops on this 2-core host took 14 s for the slowest (measured). A CI run must not fail on a slow
# start, and a server that dies is reported at once anyway, so the deadline is far beyond both.
START_TIMEOUT = 300.0


def aws_settings(endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> dict[str, str]:
    """Every AWS_* variable a process needs to talk to the server, and no other."""
    return {**credentials, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}


def environment(endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> dict[str, str]:
    """This process's environment for a child, with the machine's own AWS_* settings (a profile,
    real credentials) replaced by the server's: nothing it runs can reach a real account."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**inherited, **aws_settings(endpoint, region, credentials)}


def client(service: str, endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> Any:
    keys = {name.lower(): value for name, value in credentials.items()}
    return boto3.client(service, region_name=region, endpoint_url=endpoint, **keys)


class MotoProcess:
    """A moto server in a process of its own: the one way the project runs an emulator server (`make rehearse`, every
    test whose code under test runs in other processes). Not moto's ThreadedMotoServer: a server in the test's own
    process shares its moto backends, which every `mock_aws` of the suite resets as it starts and stops (state a
    background check or the rehearsal builds must not vanish mid-run), and cannot have settings of its own (loading
    AWS's managed policies into every in-process IAM backend costs the suite ~5 s)."""

    def __init__(self, settings: dict[str, str] | None = None, *, iam: bool = False) -> None:
        """settings: MOTO_* variables for the server, e.g. {"MOTO_ACM_VALIDATION_WAIT": "0"}.
        iam: serve with IAM enforcement possible (`enforce_iam`), recording every judged call in `action_log`.
        The port is bound here, before the server process starts, and held by it: `endpoint` is final at once."""
        listener = listening_socket()
        self.port: int = listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.action_log: Path | None = None
        self._own_log = False
        # moto builds some URLs from MOTO_PORT (its own server sets it from --port).
        env = {**os.environ, **(settings or {}), "MOTO_PORT": str(self.port)}
        command = [sys.executable, "-m", "scripts.emulator", "--fd", str(listener.fileno())]
        if iam:
            self._own_log = not env.get(ACTION_LOG_ENV)
            self.action_log = Path(env.get(ACTION_LOG_ENV) or _scratch_file(f"moto-actions-{self.port}-", ".log"))
            env[ACTION_LOG_ENV] = str(self.action_log)
            command.append("--iam")
        # What the server says before it dies is the only clue to why it did: kept, and shown by `ready`.
        self._errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed by stop)
        with listener:
            self._process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=self._errors, env=env, pass_fds=(listener.fileno(),)
            )

    def ready(self, timeout: float = START_TIMEOUT) -> str:
        """The endpoint, once the server answers. The port already accepts connections (the kernel queues
        them), so this waits only for the server process to import moto and serve: seconds on a quiet host,
        much longer on a loaded 2-core one, hence the generous deadline. A server that exits fails at once."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/data.json", timeout=30):
                    return self.endpoint
            except (urllib.error.URLError, OSError):
                status = self._process.poll()
                if status is not None:
                    said = self._said()
                    raise RuntimeError(f"moto server at {self.endpoint} exited ({status}) before it served: {said}") from None
                if time.monotonic() > deadline:
                    raise RuntimeError(f"moto server at {self.endpoint} did not answer within {timeout:.0f} s") from None
                time.sleep(0.2)

    def _said(self) -> str:
        self._errors.seek(0)
        lines = self._errors.read().strip().splitlines()
        return " | ".join(lines[-5:]) or "nothing on stderr"

    def reset(self) -> None:
        """Forget every service's state (moto's own reset, cheaper than deleting each thing through the API): the next
        test on this server starts from nothing."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()

    def enforce_iam(self) -> None:
        """From now on every call is authorized against its caller's IAM policies (the calls so far, the set-up,
        were not): moto's INITIAL_NO_AUTH_ACTION_COUNT, set to 0 on the running server."""
        # Not form-encoded (urllib's default): the server reads the count from the raw body.
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            json.loads(answer.read())

    def judged(self) -> list[tuple[str, str, str]]:
        """(allowed|denied, caller ARN, service:Action) of every call judged since `enforce_iam`, in order."""
        if self.action_log is None or not self.action_log.exists():
            return []
        return [_judged_line(line) for line in self.action_log.read_text().splitlines() if line]

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=30)
        self._errors.close()
        if self._own_log and self.action_log is not None:
            self.action_log.unlink(missing_ok=True)


def _judged_line(line: str) -> tuple[str, str, str]:
    outcome, caller, action = line.split(" ")
    return outcome, caller, action


def _scratch_file(prefix: str, suffix: str) -> str:
    handle, path = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    os.close(handle)
    return path


def listening_socket() -> socket.socket:
    """A loopback socket listening on a port the kernel chose, inheritable by a child process that serves
    on it: nobody else can take the port between choosing it and serving on it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    listener.set_inheritable(True)
    return listener


# --- the server with IAM enforcement: moto's, with two changes made in its own process -------------------


def _patch_moto_authorization(action_log: str | None) -> None:
    from moto.iam.access_control import IAMRequestBase

    check_signature = IAMRequestBase.check_signature
    check_action_permitted = IAMRequestBase.check_action_permitted
    lock = threading.Lock()

    def signature_of_a_bodiless_request(self: Any) -> str:
        auth = self._create_auth(self._access_key.create_credentials())
        request = self._create_aws_request()
        request.data = b""
        return str(auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request))

    def signature_checked_right(self: Any) -> None:
        # moto 5.2 computes the signature of a request without a body (Route53's GETs, EKS's ListClusters, ...) over
        # the request's parsed parameters, as if they were its body, so a correctly signed request fails with
        # SignatureDoesNotMatch (measured with moto 5.2.5). Such a request is checked as signed: with an empty body.
        # Every other request is checked as moto checks it, and an unknown access key is refused before this.
        given = self._get_string_between("Signature=", ",", self._headers["Authorization"])
        if self._method in BODILESS and not self._body and given == signature_of_a_bodiless_request(self):
            return
        check_signature(self)

    def recorded(self: Any, resource: str) -> None:
        outcome = "denied"
        try:
            check_action_permitted(self, resource)
            outcome = "allowed"
        finally:
            if action_log:
                with lock, open(action_log, "a") as log:
                    log.write(f"{outcome} {self._access_key.arn} {self._action}\n")

    IAMRequestBase.check_signature = signature_checked_right
    IAMRequestBase.check_action_permitted = recorded


# --- EKS as a colour's commands meet it: each cluster's Kubernetes API served at a URL of the caller's ----------------

# The base URL of a Kubernetes API that serves every cluster under a path of its name (`<base>/<cluster name>`), and
# the certificate authority its TLS certificate is signed by (PEM). With both, the server answers every cluster
# (CreateCluster, DescribeCluster, ...) with that endpoint and authority, as EKS does with the cluster's own: what
# tools/kube.py `KubeApi.for_eks` reads. Without them the server answers as moto does (an endpoint nobody serves and
# 1,400 random characters for the authority: moto 5.2.5's eks/models.py `Cluster.__init__`).
EKS_API_ENV = "EMULATOR_EKS_API"
EKS_AUTHORITY_ENV = "EMULATOR_EKS_AUTHORITY"
# What EKS names the security group it creates for a cluster (AWS, Amazon EKS User Guide, "View Amazon EKS security
# group requirements for clusters": `eks-cluster-sg-<cluster name>-<unique id>`), and its description there.
CLUSTER_GROUP_PREFIX = "eks-cluster-sg-"
CLUSTER_GROUP_DESCRIPTION = (
    "EKS created security group applied to ENI that is attached to EKS Control Plane master nodes, as well as any "
    "managed workloads."
)


def kube_api_settings(api: str, authority_pem: str) -> dict[str, str]:
    """The server's settings (MotoProcess) that make every cluster's endpoint `<api>/<cluster name>`, its certificate
    authority authority_pem."""
    return {EKS_API_ENV: api.rstrip("/"), EKS_AUTHORITY_ENV: base64.b64encode(authority_pem.encode()).decode()}


def _patch_moto_eks(api: str, authority: str) -> None:
    """Clusters as EKS makes them where a colour's commands read them (moto 5.2.5's EKS, in its server process):

    - endpoint and certificate authority: `api/<name>` and `authority` (base64 of a PEM, as EKS answers it);
    - the cluster security group EKS creates in the cluster's VPC, in `resourcesVpcConfig.clusterSecurityGroupId`
      (moto reports none: a rule on it fails with `InvalidGroup.NotFound: The security group '' does not exist`), deleted
      with the cluster as EKS deletes it;
    - `accessConfig` and `upgradePolicy` reported back as created (moto drops them: the aws provider then plans a
      replacement of the cluster at the next plan, `bootstrap_cluster_creator_admin_permissions` forcing it), with EKS's
      defaults for what the request leaves out (AWS, EKS API Reference, CreateCluster: authentication mode
      CONFIG_MAP, bootstrap admin true; UpdateClusterVersion's upgrade policy EXTENDED);
    - a node group's `remoteAccess` only when it was asked for (moto invents `{"ec2SshKey": "eksKeypair"}`, and the
      provider plans a replacement of a group created without it), and its `updateConfig` as created (moto drops it);
    - a launch template's tags on the template only (moto also copies CreateLaunchTemplate's TagSpecifications into
      the version's LaunchTemplateData, which the provider then plans to remove), and a security group rule's
      description when it references another group (moto reads it from an IP range only): both planned as in-place
      updates of a colour's node group, launch template and load balancer rule otherwise;
    - a cluster's updates (ListUpdates, DescribeUpdate: none) and its upgrade insights (ListInsights: none;
      StartInsightsRefresh completes at once; DescribeInsightsRefresh says when), which moto does not serve: what
      `python -m tools.readiness` reads.
    """
    from moto.core.responses import ActionResult
    from moto.core.utils import utcnow
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.security_groups import SecurityGroupRule
    from moto.ec2.responses.launch_templates import LaunchTemplates
    from moto.eks import urls
    from moto.eks.models import Cluster, EKSBackend, Nodegroup
    from moto.eks.responses import EKSResponse

    cluster_init = Cluster.__init__
    create_cluster = EKSResponse.create_cluster
    delete_cluster = EKSBackend.delete_cluster
    nodegroup_init = Nodegroup.__init__
    create_nodegroup = EKSResponse.create_nodegroup
    create_launch_template = LaunchTemplates.create_launch_template
    refreshes: dict[str, Any] = {}

    def served(self: Any, name: str, *args: Any, **kwargs: Any) -> None:
        cluster_init(self, name, *args, **kwargs)
        self.endpoint = f"{api}/{name}"
        self.certificate_authority = {"data": authority}

    def created(self: Any) -> Any:
        answer = create_cluster(self)
        cluster = self.eks_backend.clusters[self._get_param("name")]
        asked = self._get_param("accessConfig") or {}
        cluster.access_config = {
            "authenticationMode": asked.get("authenticationMode", "CONFIG_MAP"),
            "bootstrapClusterCreatorAdminPermissions": asked.get("bootstrapClusterCreatorAdminPermissions", True),
        }
        cluster.upgrade_policy = self._get_param("upgradePolicy") or {"supportType": "EXTENDED"}
        subnets = cluster.resources_vpc_config.get("subnetIds") or []
        ec2 = ec2_backends[self.current_account][self.region]
        vpc = ec2.get_subnet(subnets[0]).vpc_id
        group = ec2.create_security_group(
            name=f"{CLUSTER_GROUP_PREFIX}{cluster.name}-{uuid.uuid4().hex[:10]}",
            description=CLUSTER_GROUP_DESCRIPTION,
            vpc_id=vpc,
            tags={"aws:eks:cluster-name": cluster.name, f"kubernetes.io/cluster/{cluster.name}": "owned"},
        )
        cluster.resources_vpc_config = {**cluster.resources_vpc_config, "clusterSecurityGroupId": group.id, "vpcId": vpc}
        return answer

    def deleted(self: Any, name: str) -> Any:
        cluster = delete_cluster(self, name)
        refreshes.pop(name, None)
        group = cluster.resources_vpc_config.get("clusterSecurityGroupId")
        if group:
            ec2_backends[self.account_id][self.region_name].delete_security_group(group_id=group)
        return cluster

    def without_invented_access(self: Any, *args: Any, remote_access: Any = None, **kwargs: Any) -> None:
        nodegroup_init(self, *args, remote_access=remote_access, **kwargs)
        self.remote_access = remote_access

    def nodegroup_created(self: Any) -> Any:
        answer = create_nodegroup(self)
        cluster = self.eks_backend.clusters[self._get_param("name")]
        cluster.nodegroups[self._get_param("nodegroupName")].update_config = self._get_param("updateConfig")
        return answer

    def template_created(self: Any) -> Any:
        asked = self._get_param("LaunchTemplateData", {}).get("TagSpecifications")
        answer = create_launch_template(self)
        (template,) = self.ec2_backend.describe_launch_templates(template_names=[self._get_param("LaunchTemplateName")])
        data = template.default_version().data
        data.pop("TagSpecifications", None)
        if asked:
            data["TagSpecifications"] = asked
        return answer

    def rule_description(self: Any) -> Any:
        return self.ip_range.get("Description") or self.source_group.get("Description")

    def list_updates(self: Any) -> ActionResult:
        self.eks_backend.describe_cluster(name=self._get_param("name"))  # ResourceNotFoundException as EKS's
        return ActionResult({"updateIds": []})

    def list_insights(self: Any) -> ActionResult:
        self.eks_backend.describe_cluster(name=self._get_param("name"))
        return ActionResult({"insights": []})

    def start_insights_refresh(self: Any) -> ActionResult:
        name = self._get_param("name")
        self.eks_backend.describe_cluster(name=name)
        now = utcnow()
        refreshes[name] = {"status": "COMPLETED", "message": "", "startedAt": now, "endedAt": now}
        return ActionResult({"status": "IN_PROGRESS", "message": ""})

    def describe_insights_refresh(self: Any) -> ActionResult:
        name = self._get_param("name")
        cluster = self.eks_backend.describe_cluster(name=name)
        # EKS's own daily refresh, as of the cluster's creation, until one is asked for.
        made = cluster.created_at
        return ActionResult(refreshes.get(name, {"status": "COMPLETED", "startedAt": made, "endedAt": made}))

    Cluster.__init__ = served
    EKSResponse.create_cluster = created
    EKSBackend.delete_cluster = deleted
    Nodegroup.__init__ = without_invented_access
    EKSResponse.create_nodegroup = nodegroup_created
    LaunchTemplates.create_launch_template = template_created
    SecurityGroupRule.description = property(rule_description)
    for operation, answer in {
        "list_updates": list_updates,
        "list_insights": list_insights,
        "start_insights_refresh": start_insights_refresh,
        "describe_insights_refresh": describe_insights_refresh,
    }.items():
        setattr(EKSResponse, operation, answer)
    # Their paths (botocore's EKS model, requestUri), routed to moto's dispatch like its own.
    for path in ("/updates", "/insights", "/insights-refresh"):
        urls.url_paths["{0}/clusters/(?P<name>[^/]+)" + path + "$"] = urls.response.dispatch


def _patch_moto_cluster_vpc() -> None:
    """DescribeCluster names the VPC of the cluster's subnets (`resourcesVpcConfig.vpcId`), as EKS does; moto 5.2.5
    echoes the request, which has none. tools/common_guard.py finds a colour in common's VPC by it. A subnet the
    emulator does not hold (moto accepts any ID, and tests name made-up ones) leaves the VPC out, as moto did."""
    from moto.ec2.exceptions import InvalidSubnetIdError
    from moto.ec2.models import ec2_backends
    from moto.eks.models import EKSBackend

    create_cluster = EKSBackend.create_cluster

    def with_vpc(self: Any, *args: Any, resources_vpc_config: dict[str, Any], **kwargs: Any) -> Any:
        subnets = resources_vpc_config.get("subnetIds") or []
        if subnets and "vpcId" not in resources_vpc_config:
            try:
                vpc = ec2_backends[self.account_id][self.region_name].get_subnet(subnets[0]).vpc_id
                resources_vpc_config = {**resources_vpc_config, "vpcId": vpc}
            except InvalidSubnetIdError:
                pass
        return create_cluster(self, *args, resources_vpc_config=resources_vpc_config, **kwargs)

    EKSBackend.create_cluster = with_vpc


# What the emulator answers DescribeAddonVersions with, as EKS's default of an add-on for any Kubernetes version: a colour's
# plan reads the default of an unpinned add-on that has a minimum (components/addons.py), and moto 5.2.5 answers
# "Not yet implemented". The EBS CSI driver's is the minimum its scoped policy needs (model/eks_addons.py).
EMULATED_ADDON_DEFAULTS = {"aws-ebs-csi-driver": "v1.58.0-eksbuild.1"}
OTHER_ADDON_DEFAULT = "v1.0.0-eksbuild.1"


def _patch_moto_addon_versions() -> None:
    """DescribeAddonVersions, as EKS answers it (EKS API Reference: an `addons` list, each with `addonVersions` and their
    `compatibilities`, one `defaultVersion` per cluster version), for the add-on and Kubernetes version asked."""
    from moto.core.responses import ActionResult
    from moto.eks import urls
    from moto.eks.responses import EKSResponse

    def describe_addon_versions(self: Any) -> ActionResult:
        name = self._get_param("addonName")
        version = self._get_param("kubernetesVersion")
        names = [name] if name else sorted(EMULATED_ADDON_DEFAULTS)
        addons = [
            {
                "addonName": addon,
                "type": "storage" if addon == "aws-ebs-csi-driver" else "networking",
                "owner": "aws",
                "publisher": "eks",
                "addonVersions": [
                    {
                        "addonVersion": EMULATED_ADDON_DEFAULTS.get(addon, OTHER_ADDON_DEFAULT),
                        "architecture": ["amd64", "arm64"],
                        "compatibilities": [
                            {"clusterVersion": version or "1.35", "platformVersions": ["*"], "defaultVersion": True}
                        ],
                        "requiresConfiguration": False,
                        "requiresIamPermissions": False,
                    }
                ],
            }
            for addon in names
        ]
        return ActionResult({"addons": addons})

    EKSResponse.describe_addon_versions = describe_addon_versions
    # Its path (botocore's EKS model, requestUri), routed to moto's dispatch like its own.
    urls.url_paths["{0}/addons/supported-versions$"] = urls.response.dispatch


def _patch_moto_route53() -> None:
    """A DELETE of a weighted record deletes that record only: its name, type and set identifier, as Route53 does.

    moto 5.2.5 deletes every record of the zone sharing the set identifier, whatever its name
    (moto/route53/models.py: `delete_rrset_by_id(record_set["SetIdentifier"])`): the traffic stack's records all carry
    the set identifier `shared-load-balancer` (model/routes.py), so removing a colour's preview host took the public
    host with it, and the next deploy's CREATE of that host met moto's journal ("already exists")."""
    import copy

    from moto.route53.models import Route53Backend

    original = Route53Backend.change_resource_record_sets

    def precise(self: Any, zoneid: str, change_list: list[dict[str, Any]]) -> None:
        zone = self.get_hosted_zone(zoneid)
        rest = []
        for change in change_list:
            record = change["ResourceRecordSet"]
            if change["Action"] != "DELETE" or "SetIdentifier" not in record:
                rest.append(change)
                continue
            name = record["Name"] if record["Name"].endswith(".") else f"{record['Name']}."
            zone.rrsets = [
                r for r in zone.rrsets if (r.name, r.type, r.set_identifier) != (name, record["Type"], record["SetIdentifier"])
            ]
            zone.rr_changes.append(copy.deepcopy(change))
        if rest:
            original(self, zoneid, rest)

    Route53Backend.change_resource_record_sets = precise


# Where AWS's Resource Groups Tagging API lists a global service's resources (Route 53's hosted zones): us-east-1 only.
GLOBAL_REGION = "us-east-1"


def _patch_moto_zone_tags() -> None:
    """The Tagging API lists Route 53's hosted zones, with their tags, when asked in GLOBAL_REGION, as AWS does (asked
    in another region, AWS lists none): common's guard against replacing its sub-zone finds it there
    (components/sub_zone.py). moto 5.2.5 lists no hosted zone at all (its Route 53 backend is not taggable there)."""
    from moto.core.resource_tagging import TaggedResource, make_tag_matcher, match_resource_type
    from moto.resourcegroupstaggingapi.models import ResourceGroupsTaggingAPIBackend
    from moto.route53.models import route53_backends

    original = ResourceGroupsTaggingAPIBackend._get_resources_generator

    def with_zones(
        self: Any,
        tag_filters: list[dict[str, Any]] | None = None,
        resource_type_filters: list[str] | None = None,
        resource_arn_list: list[str] | None = None,
    ) -> Any:
        yield from original(self, tag_filters, resource_type_filters, resource_arn_list)
        if self.region_name != GLOBAL_REGION or not match_resource_type("route53:hostedzone", resource_type_filters):
            return
        route53 = route53_backends[self.account_id][self.partition]
        matches = make_tag_matcher(tag_filters)
        for zone_id in route53.zones:
            tags = dict(route53.list_tags_for_resource(zone_id))
            arn = f"arn:{self.partition}:route53:::hostedzone/{zone_id}"
            if tags and matches(tags) and (not resource_arn_list or arn in resource_arn_list):
                yield TaggedResource(arn=arn, tags=tags, resource_type="route53:hostedzone")

    ResourceGroupsTaggingAPIBackend._get_resources_generator = with_zones


PERCENTILE = re.compile(r"p\d+(\.\d+)?")  # CloudWatch's pNN statistics


def nearest_rank(values: Sequence[float], stat: str) -> float | None:
    """A percentile statistic (pNN) of some values, by nearest rank, as CloudWatch answers it; None without values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[max(1, math.ceil(float(stat[1:]) / 100 * len(ordered))) - 1]


def _patch_moto_percentiles() -> None:
    """CloudWatch's percentile statistics, which moto 5.2 does not compute (it answers Sum, Average, Minimum, Maximum,
    SampleCount): the shift's gate reads TargetResponseTime p99 (tools/shift/metrics.py)."""
    from moto.cloudwatch.models import Statistics

    original = Statistics.get_statistics_for_type

    def with_percentiles(self: Any, stat: str) -> Any:
        return nearest_rank(self.metric_single_values_list, stat) if PERCENTILE.fullmatch(stat) else original(self, stat)

    Statistics.get_statistics_for_type = with_percentiles


class OneAtATime:
    """A WSGI app that lets one request at a time into the app it wraps; the connections stay on threads of their own.

    moto's backends are plain dicts and lists with no lock, and Terraform sends ten requests at once: a request that
    changes a backend while another walks it can fail after its change is made (a 500), the AWS SDK retries it, and the
    retry is refused as a duplicate (seen once: `EntityAlreadyExists: A policy called eks-bg-external-dns already
    exists` on the first CreatePolicy of a fresh emulator). Each request takes milliseconds: in turn, nothing waits."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        with self.lock:
            return list(self.app(environ, start_response))


class AnsweredOnce:
    """A WSGI app that answers a retried attempt of an AWS SDK call whose earlier attempt succeeded with that attempt's
    response, instead of running the call again.

    An SDK retries a call whose response it did not get whole (a connection reset, a timeout) under the same
    `amz-sdk-invocation-id`, and AWS's own creates are not idempotent either: moto ran the first attempt, so the second
    is refused as a duplicate and the apply fails (seen in the rehearsal, requests one at a time already:
    `EntityAlreadyExists: Role with name eks-bg-external-dns already exists` on the first CreateRole of a fresh
    emulator). Only a success is answered again: a failed attempt changed nothing, and its retry runs as it came. Each
    replay is said on stderr (MotoProcess keeps it)."""

    def __init__(self, app: Any, *, remembered: int = 1024) -> None:
        """remembered: how many successful invocations are kept, the oldest going first (an SDK retries within seconds;
        Terraform sends tens of calls a second at most)."""
        self.app = app
        self.remembered = remembered
        self.answered: OrderedDict[str, tuple[str, list[tuple[str, str]], bytes]] = OrderedDict()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        invocation = environ.get("HTTP_AMZ_SDK_INVOCATION_ID")
        if invocation and invocation in self.answered:
            status, headers, body = self.answered[invocation]
            attempt = environ.get("HTTP_AMZ_SDK_REQUEST", "attempt=?").split(";")[0]
            print(f"emulator: {attempt} of invocation {invocation} answered with its first attempt's {status}", file=sys.stderr)
            start_response(status, headers)
            return [body]
        said: list[tuple[str, list[tuple[str, str]]]] = []

        def recorded(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            said.append((status, list(headers)))
            return start_response(status, headers, exc_info)

        body = b"".join(self.app(environ, recorded))
        if invocation and said and said[-1][0].startswith("2"):
            self.answered[invocation] = (*said[-1], body)
            while len(self.answered) > self.remembered:
                self.answered.popitem(last=False)
        return [body]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.emulator", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int, help="bind this port")
    where.add_argument("--fd", type=int, help="serve on this inherited, listening socket (MotoProcess)")
    parser.add_argument("--iam", action="store_true", help="IAM enforcement possible, judged calls logged")
    args = parser.parse_args(argv)
    if args.iam:
        _patch_moto_authorization(os.environ.get(ACTION_LOG_ENV))
    _patch_moto_addon_versions()
    _patch_moto_cluster_vpc()
    _patch_moto_percentiles()
    _patch_moto_route53()
    _patch_moto_zone_tags()
    if os.environ.get(EKS_API_ENV):
        _patch_moto_eks(os.environ[EKS_API_ENV], os.environ[EKS_AUTHORITY_ENV])
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    app = OneAtATime(AnsweredOnce(DomainDispatcherApplication(create_backend_app)))
    server = make_server(args.host, args.port or 0, app, threaded=True, request_handler=MotoRequestHandler, fd=args.fd)
    os.environ.setdefault("MOTO_PORT", str(server.port))
    server.serve_forever()


if __name__ == "__main__":
    main()
