"""The operator commands' access to AWS: their clients, made from one session, and what AWS really holds for a
colour, read with boto3: the weighted records, the load balancer, and what the colour's controllers made and
must remove before its cluster goes.

The shift and the teardown decide from these readings, not from config or Terraform state:
config says what was asked for, Route53 says what clients are being told.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tools.kube import KubeApi

# Tag the AWS Load Balancer Controller puts on every load balancer, target group and security
# group it creates, valued with the cluster name given to it (our cluster name).
LBC_CLUSTER_TAG = "elbv2.k8s.aws/cluster"
# Route53 answers an alias record with its target's TTL; for a load balancer that is 60 s.
ALIAS_TTL = 60
_ADDRESS_TYPES = ("A", "AAAA", "CNAME")  # kinds of record a weighted host name may be
_TAG_BATCH = 20  # ELBv2 DescribeTags takes at most 20 ARNs

# What AWS answers when the caller's credentials are no longer (or never were) good, when it denies the caller an
# action, by service: STS and IAM say ExpiredToken, JSON services ExpiredTokenException, EC2 RequestExpired or
# AuthFailure, IAM-style services AccessDenied, EC2 UnauthorizedOperation, EKS and CloudWatch AccessDeniedException.
_EXPIRED = {"ExpiredToken", "ExpiredTokenException", "RequestExpired", "TokenRefreshRequired"}
_NOT_ACCEPTED = {
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "SignatureDoesNotMatch",
    "InvalidSignatureException",
    "AuthFailure",
}
_DENIED = {
    "AccessDenied",
    "AccessDeniedException",
    "UnauthorizedOperation",
    "UnauthorizedException",
    "AuthorizationError",
    "Forbidden",
}
_LOG_IN = "log in to the account (`aws sso login`, or set AWS_PROFILE or the AWS_* keys) and run the command again"
# What an operator command denied an action needs; a command another identity runs says its own (`needs`).
NEEDS_DEPLOYER = (
    "it needs the deployer's policies, or to move traffic the traffic operator's (policies/README.md); and, for what "
    "reads a cluster (readiness, the teardown), a cluster admin access entry"
)


class Aws:
    """The AWS clients of the operator commands, made on first use from one session in the project's region, and
    a cluster's Kubernetes API. Tests hand in clients on an emulator, and a fake Kubernetes API."""

    def __init__(self, region: str, *, kube: Callable[[str], KubeApi] | None = None, **clients: Any) -> None:
        """kube: a cluster's Kubernetes API by cluster name; default: the EKS endpoint, with a token of this session."""
        self.region = region
        self._clients = clients
        self._session: Any = None
        self._kube = kube

    def session(self) -> Any:
        if self._session is None:
            import boto3  # only once AWS is really called: the commands' --help and refusals stay fast

            self._session = boto3.Session(region_name=self.region)
        return self._session

    def client(self, service: str) -> Any:
        if service not in self._clients:
            self._clients[service] = self.session().client(service)
        return self._clients[service]

    @property
    def route53(self) -> Any:
        return self.client("route53")

    @property
    def elbv2(self) -> Any:
        return self.client("elbv2")

    @property
    def ec2(self) -> Any:
        return self.client("ec2")

    @property
    def eks(self) -> Any:
        return self.client("eks")

    @property
    def cloudwatch(self) -> Any:
        return self.client("cloudwatch")

    @property
    def s3(self) -> Any:
        return self.client("s3")

    @property
    def ssm(self) -> Any:
        return self.client("ssm")

    @property
    def sts(self) -> Any:
        return self.client("sts")

    def kube(self, cluster: str) -> KubeApi:
        """The cluster's Kubernetes API (the caller's identity must be one of its admins)."""
        if self._kube is not None:
            return self._kube(cluster)
        return KubeApi.for_eks(self.session(), self.eks, cluster, self.region)


@dataclass(frozen=True)
class WeightedRecord:
    colour: str  # the record's set identifier
    weight: int
    ttl: int  # how long resolvers may keep serving it
    target: str  # alias DNS name (or first value), lowercase, without the trailing dot


def fqdn(name: str) -> str:
    return name.rstrip(".").lower() + "."


def zone_id(route53: Any, zone_name: str) -> str:
    """The public hosted zone named zone_name (common's sub-zone)."""
    zone = find_zone(route53, zone_name)
    if zone is None:
        raise LookupError(f"no public hosted zone named {zone_name}: deploy common first (cdktf deploy common)")
    return zone


def find_zone(route53: Any, zone_name: str) -> str | None:
    """The public hosted zone named zone_name, or None when there is none. Two such zones are an
    error, not an absence: which one holds the records cannot be told."""
    wanted = fqdn(zone_name)
    listing = route53.list_hosted_zones_by_name(DNSName=wanted, MaxItems="100")["HostedZones"]
    zones = [z for z in listing if z["Name"] == wanted and not z.get("Config", {}).get("PrivateZone", False)]
    if not zones:
        return None
    if len(zones) > 1:
        ids = ", ".join(z["Id"].rsplit("/", 1)[-1] for z in zones)
        raise LookupError(f"{len(zones)} public hosted zones are named {zone_name} ({ids}): remove the one common did not make")
    return str(zones[0]["Id"].rsplit("/", 1)[-1])


def record_sets(route53: Any, zone: str) -> Iterator[dict[str, Any]]:
    for page in route53.get_paginator("list_resource_record_sets").paginate(HostedZoneId=zone):
        yield from page["ResourceRecordSets"]


def weighted_records(route53: Any, zone: str, hostname: str) -> dict[str, WeightedRecord]:
    """Each colour's weighted address record for hostname, by set identifier."""
    found: dict[str, WeightedRecord] = {}
    name = fqdn(hostname)
    address_records = (r for r in record_sets(route53, zone) if r["Name"].lower() == name and r["Type"] in _ADDRESS_TYPES)
    for record in sorted(address_records, key=lambda r: _ADDRESS_TYPES.index(r["Type"])):
        colour = record.get("SetIdentifier")
        if colour is None or "Weight" not in record or colour in found:
            continue  # not weighted, or the AAAA twin of an A record already read
        alias = record.get("AliasTarget")
        target = alias["DNSName"] if alias else record["ResourceRecords"][0]["Value"]
        ttl = ALIAS_TTL if alias else int(record["TTL"])
        found[colour] = WeightedRecord(colour=colour, weight=int(record["Weight"]), ttl=ttl, target=_host(target))
    return found


def record_weight(route53: Any, zone: str | None, colour: str) -> int:
    """The largest weight of a weighted record with the colour's set identifier: what a colour's ExternalDNS wrote
    before the shared load balancer carried the weights (0 when there is none, or no zone)."""
    if zone is None:
        return 0
    return max(
        (int(r["Weight"]) for r in record_sets(route53, zone) if r.get("SetIdentifier") == colour and "Weight" in r), default=0
    )


def load_balancer_for(elbv2: Any, record: WeightedRecord) -> str:
    """The ARN of the load balancer a weighted record points at."""
    for page in elbv2.get_paginator("describe_load_balancers").paginate():
        for lb in page["LoadBalancers"]:
            if _host(lb["DNSName"]) == record.target:
                return str(lb["LoadBalancerArn"])
    raise LookupError(
        f"the {record.colour} record points at {record.target}, which is no load balancer in this account and region"
    )


def load_balancer_name(arn: str) -> str:
    """`app/<name>/<id>` of a load balancer's ARN: how people name it, and CloudWatch's `LoadBalancer` dimension."""
    return arn.split(":loadbalancer/", 1)[1]


def colour_leftovers(*, route53: Any, elbv2: Any, ec2: Any, zone: str, colour: str, cluster: str) -> list[str]:
    """What the colour's load balancer controller and ExternalDNS made that still exists."""
    found: list[str] = []
    # The owner is a whole value of the TXT record's list (`...,external-dns/owner=<id>,...`): blue's is not blue-2's.
    owner = re.compile(rf"external-dns/owner={re.escape(cluster)}(,|\"|$)")
    for record in record_sets(route53, zone):
        values = " ".join(v["Value"] for v in record.get("ResourceRecords", []))
        if record.get("SetIdentifier") == colour:
            found.append(f"Route53 {record['Type']} record {record['Name']} (set identifier {colour})")
        elif record["Type"] == "TXT" and owner.search(values):
            found.append(f"Route53 TXT record {record['Name']} (ExternalDNS owner {cluster})")
    found += [f"load balancer {arn}" for arn in cluster_load_balancers(elbv2, cluster)]
    arns = [
        item["TargetGroupArn"]
        for page in elbv2.get_paginator("describe_target_groups").paginate()
        for item in page["TargetGroups"]
    ]
    found += [f"target group {arn}" for arn in _tagged(elbv2, arns, cluster)]
    groups = ec2.describe_security_groups(Filters=[{"Name": f"tag:{LBC_CLUSTER_TAG}", "Values": [cluster]}])["SecurityGroups"]
    found += [f"security group {g['GroupId']} ({g['GroupName']})" for g in groups]
    return found


def cluster_load_balancers(elbv2: Any, cluster: str) -> list[str]:
    """ARNs of the load balancers the cluster's load balancer controller made (its tag names the cluster)."""
    arns = [
        lb["LoadBalancerArn"]
        for page in elbv2.get_paginator("describe_load_balancers").paginate()
        for lb in page["LoadBalancers"]
    ]
    return _tagged(elbv2, arns, cluster)


def _tagged(elbv2: Any, arns: list[str], cluster: str) -> list[str]:
    tagged = []
    for start in range(0, len(arns), _TAG_BATCH):
        for description in elbv2.describe_tags(ResourceArns=arns[start : start + _TAG_BATCH])["TagDescriptions"]:
            tags = {t["Key"]: t["Value"] for t in description.get("Tags", [])}
            if tags.get(LBC_CLUSTER_TAG) == cluster:
                tagged.append(description["ResourceArn"])
    return tagged


# When the session's credentials end, if the environment says: botocore's EnvProvider reads this variable (its
# EXPIRY_TIME) for credentials handed over in AWS_* variables, as the workflows do (docs/ci.md).
EXPIRATION_ENV = "AWS_CREDENTIAL_EXPIRATION"


def credentials_expire_at(environ: Mapping[str, str] = os.environ) -> datetime | None:
    """When the credentials handed over in the environment end (ISO 8601); None when it does not say (a profile or an
    SSO login, which refresh themselves). A value with quotes around it is read too (a step output JSON-encoded)."""
    value = environ.get(EXPIRATION_ENV, "").strip().strip('"')
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def aws_problem(err: BaseException, *, needs: str = NEEDS_DEPLOYER) -> str | None:
    """One line for an operator when err is an AWS SDK error (credentials, access, network, an API error); None for
    anything else, which stays a bug with its traceback. botocore is imported only here, once such an error exists.
    needs: what the identity needs, said after a denial."""
    if not type(err).__module__.startswith("botocore"):
        return None
    from botocore import exceptions as sdk  # lazy: loaded once an SDK error exists, never for --help

    said = " ".join(str(err).split())
    if isinstance(err, sdk.ClientError):
        code = err.response.get("Error", {}).get("Code", "")
        message = " ".join(str(err.response.get("Error", {}).get("Message", "")).split())[:300]
        operation = err.operation_name
        if code in _EXPIRED:
            return f"the AWS credentials have expired ({operation}: {code}): {_LOG_IN}"
        if code in _NOT_ACCEPTED:
            return f"AWS does not accept these credentials ({operation}: {code}: {message}): {_LOG_IN}"
        if code in _DENIED:
            return f"AWS denied {operation} to this identity ({code}: {message}): {needs}"
        return f"AWS {operation} failed ({code}: {message})"
    if isinstance(err, sdk.NoCredentialsError | sdk.PartialCredentialsError | sdk.ProfileNotFound):
        return f"no usable AWS credentials ({said}): {_LOG_IN}"
    if isinstance(err, sdk.SSOError | sdk.TokenRetrievalError | sdk.CredentialRetrievalError):
        return f"the AWS login has expired or cannot be refreshed ({said}): {_LOG_IN}"
    if isinstance(err, sdk.ConnectionError | sdk.HTTPClientError):
        return f"cannot reach AWS ({said}): check the network, the region and AWS_ENDPOINT_URL if one is set"
    if isinstance(err, sdk.NoRegionError):
        return f"{said}: set the project's `region` or AWS_REGION"
    return f"the AWS SDK failed ({type(err).__name__}: {said})"


@contextmanager
def aws_errors_as(error: Callable[[str], Exception], *, needs: str = NEEDS_DEPLOYER) -> Iterator[None]:
    """Inside, an AWS SDK error becomes error(its operator's line, aws_problem; needs: what a denied identity needs):
    a command that has changed something says what is in place, or one that must not guess says why it stops. Anything
    else passes through unchanged."""
    try:
        yield
    except Exception as err:
        said = aws_problem(err, needs=needs)
        if said is None:
            raise
        raise error(said) from None


def _host(dns_name: str) -> str:
    # Route53 stores alias targets as `dualstack.<lb dns name>.`; compare bare names.
    host = dns_name.rstrip(".").lower()
    return host.removeprefix("dualstack.")
