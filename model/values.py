"""The facts one cluster hands to its charts: Terraform -> the parent Application (model/bootstrap.py,
applied by bootstrap/manifests) -> argocd/apps at the colour's revision -> children.

These keys are the contract with the charts under argocd/; tests render the charts from the
values the synthesized helm_release carries, so a key renamed on one side only fails there.
Each application's chart gets `blueGreen`: the part of the facts about it (model/config/applications.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.admission import admission_facts
from model.argocd_access import APPLICATION_READERS, argocd_facts
from model.config import BLUE_GREEN, Application, Config, applications, cluster_name, preview_hostname, public_hostname
from model.contract import CommonOutput
from model.external_secrets import manifests, materialised
from model.platform import CHILDREN
from model.workloads import WORKLOADS

APPS_PATH = "argocd/apps"  # where the parent Application finds the child Applications in Git
# The version of the facts' shape. argocd/apps and the project's application charts refuse to render facts of another
# version (their templates/_contract.tpl): a chart at an older revision would otherwise misread renamed facts silently.
# Bump it, and the charts' `$written`, together with any change of a key below (docs/upgrading.md says the order).
# 2: applications as data (`applications`, `blueGreen`); 1 had one sample app (`sampleApp`, `ingress`, `dns.hostname`).
CONTRACT_VERSION = 2
# syncPolicy.retry of the parent Application and every child: a failed sync is tried again, 10 s doubling
# to 5 min, ten times (about half an hour), instead of waiting for the next commit.
SYNC_RETRY = {"limit": 10, "backoff": {"duration": "10s", "factor": 2, "maxDuration": "5m"}}


def cluster_facts(
    *,
    config: Config,
    colour: str,
    common: Callable[[str], str],
    target_group: Callable[[str], str],
) -> dict[str, Any]:
    """common: reads one output of common's state; target_group: the colour's target group of an application, read
    from the traffic stack's state (Terraform references)."""
    release = config.release(colour)
    name = cluster_name(config, colour)
    cluster = {
        "name": name,
        "region": config.region,
        "vpcId": common(CommonOutput.VPC_ID),
        "vpcCidr": config.network.cidr,
        "colour": colour,
    }
    return {
        "contractVersion": CONTRACT_VERSION,
        "git": {"repoURL": config.gitops.repo_url, "targetRevision": release.gitops_revision, "path": APPS_PATH},
        "cluster": cluster,
        "dns": {
            "zoneName": common(CommonOutput.ZONE_NAME),
            # One owner per cluster: each colour's ExternalDNS updates only the records it wrote.
            "txtOwnerId": name,
            "syncInterval": f"{config.traffic.sync_interval_seconds}s",
        },
        "identities": {w.name: {"namespace": w.namespace, "serviceAccount": w.service_account} for w in WORKLOADS},
        # The chart versions of the children Argo CD installs: this colour's platform release.
        "platform": {c.name: release.platform.version(c) for c in CHILDREN if c.chart},
        "syncRetry": SYNC_RETRY,
        # Who may use Argo CD and how they log in (additive: charts of an older revision ignore it).
        "argocd": argocd_facts(config),
        # The Secrets External Secrets Operator makes from Secrets Manager (the ClusterSecretStore and ExternalSecrets
        # Terraform's bootstrap applied first): argocd/apps renders these same objects, so Argo CD keeps them. Names
        # of secrets only, never a value. Optional for the charts (an older Terraform hands none).
        "externalSecrets": manifests(materialised(config), region=config.region),
        # The admission policy that refuses load balancers in the applications' namespaces (model/admission.py).
        "admission": admission_facts(config),
        # The traffic operator's Kubernetes group (components/traffic_operator_access.py): argocd/apps lets it read each
        # application's Service and pods, for readiness's gate check (templates/readers.yaml; additive).
        "trafficOperator": {"group": APPLICATION_READERS},
        "applications": {
            app.name: _application(config, colour, app, cluster, common, target_group(app.name)) for app in applications(config)
        },
    }


def _application(
    config: Config,
    colour: str,
    app: Application,
    cluster: dict[str, Any],
    common: Callable[[str], str],
    target_group_arn: str,
) -> dict[str, Any]:
    """What argocd/apps makes of one application: its child Application (its chart at this colour's revision of it,
    with its values and `blueGreen`), its namespace, and the TargetGroupBinding that puts its pods behind the colour's
    target group of the shared load balancer."""
    release = config.release(colour).applications[app.name]
    facts: dict[str, Any] = {
        "contractVersion": CONTRACT_VERSION,
        "application": app.name,
        "colour": colour,
        "cluster": {key: cluster[key] for key in ("name", "region", "vpcCidr")},
        "serviceAccount": app.service_account,
        "service": {"name": app.service_name, "port": app.config.service.port},
        "hosts": {"public": public_hostname(config, app), "preview": preview_hostname(config, app, colour)},
        "table": {"name": common(CommonOutput.TABLE_NAME)},
    }
    if app.config.image is not None:
        facts["image"] = {"repository": common(app.image_output), "tag": release.image_tag}
    return {
        "namespace": app.namespace,
        "project": app.config.group,  # its AppProject (additive, like `argocd`)
        "wave": app.config.wave,
        "source": {
            "repoURL": app.config.source.repo_url or config.gitops.repo_url,
            "targetRevision": release.revision,
            "path": app.config.source.path,
        },
        "service": {"name": app.service_name, "port": app.config.service.port},
        "targetGroupArn": target_group_arn,
        "values": {**app.config.values, BLUE_GREEN: facts},
    }
