"""What a colour made outside the shared load balancer, as AWS holds it: the records, load balancers, target groups
and security groups its own load balancer controller and ExternalDNS made. The teardown waits until they are gone
(tools/hooks/teardown.py); retire finds common's zone with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Tag the AWS Load Balancer Controller puts on every load balancer, target group and security
# group it creates, valued with the cluster name given to it (our cluster name).
LBC_CLUSTER_TAG = "elbv2.k8s.aws/cluster"
_TAG_BATCH = 20  # ELBv2 DescribeTags takes at most 20 ARNs


def fqdn(name: str) -> str:
    return name.rstrip(".").lower() + "."


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
