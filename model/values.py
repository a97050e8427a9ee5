"""The facts one cluster hands to its charts: Terraform -> the parent Application (model/bootstrap.py,
applied by bootstrap/manifests) -> argocd/apps at the colour's revision -> children.

These keys are the contract with the charts under argocd/; tests render the charts from the
values the synthesized helm_release carries, so a key renamed on one side only fails there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.config import ClusterConfig, Config
from model.contract import CommonOutput
from model.platform import CHILDREN, SAMPLE_APP
from model.workloads import WORKLOADS

APPS_PATH = "argocd/apps"  # where the parent Application finds the child Applications in Git
# The version of the facts' shape. argocd/apps and argocd/sample-app refuse to render facts of another version
# (their templates/_contract.tpl): a chart at an older revision would otherwise misread renamed facts silently.
# Bump it, and the charts' `$written`, together with any change of a key below (docs/upgrading.md says the order).
CONTRACT_VERSION = 1
DISABLED = "disabledApplications"  # children argocd/apps leaves out
# syncPolicy.retry of the parent Application and every child: a failed sync is tried again, 10 s doubling
# to 5 min, ten times (about half an hour), instead of waiting for the next commit.
SYNC_RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}


def cluster_facts(
    *, config: Config, colour: str, cluster: ClusterConfig, cluster_name: str, common: Callable[[str], str]
) -> dict[str, Any]:
    """common: reads one output of common's state (a Terraform reference)."""
    release = config.release(colour)
    facts = {
        "contractVersion": CONTRACT_VERSION,
        "git": {"repoURL": config.gitops.repo_url, "targetRevision": release.gitops_revision, "path": APPS_PATH},
        "cluster": {
            "name": cluster_name,
            "region": config.region,
            "vpcId": common(CommonOutput.VPC_ID),
            "vpcCidr": config.network.cidr,
            "colour": colour,
        },
        "dns": {
            "zoneName": common(CommonOutput.ZONE_NAME),
            "hostname": config.dns.app_hostname,
            # Only this colour's: readiness probes it end to end before the colour gets any weight (additive: charts
            # of an older revision ignore it, so the contract version stays).
            "previewHostname": config.dns.preview_hostname(colour),
            # One owner per cluster: each colour's ExternalDNS updates only the records it wrote.
            "txtOwnerId": cluster_name,
            "syncInterval": f"{config.traffic.sync_interval_seconds}s",
        },
        "ingress": {
            "certificateArn": common(CommonOutput.CERTIFICATE_ARN),
            "weight": cluster.weight,
            "setIdentifier": colour,
            "ttl": config.traffic.record_ttl,
        },
        "identities": {w.name: {"namespace": w.namespace, "serviceAccount": w.service_account} for w in WORKLOADS},
        "sampleApp": {
            "tableName": common(CommonOutput.TABLE_NAME),
            "image": {"repository": common(CommonOutput.IMAGE_REPOSITORY_URL), "tag": release.image_tag},
        },
        # The chart versions of the children Argo CD installs: this colour's platform release.
        "platform": {c.name: release.platform.version(c) for c in CHILDREN if c.chart},
        "syncRetry": SYNC_RETRY,
    }
    if config.app.delivery == "helm":  # Terraform installs it; Argo CD must not install it too
        facts[DISABLED] = [SAMPLE_APP.name]
    return facts


def sample_app_values(facts: dict[str, Any]) -> dict[str, Any]:
    """What the sample-app chart gets: the facts, exactly as argocd/apps hands them down."""
    return {key: value for key, value in facts.items() if key != DISABLED}
