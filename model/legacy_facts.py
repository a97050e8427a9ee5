"""Values contract 1: the facts of a colour whose Git revision predates applications as data.

The charts at such a revision (argocd/apps and argocd/sample-app of the release before) read contract 1 and refuse
any other: one application, its own load balancer (an Ingress) and its ExternalDNS records weighted by the colour's
`weight`. Until that colour is retired, Terraform must keep handing it exactly what it had, or its App of Apps stops
rendering (docs/upgrading.md: "A change of the values contract"). A colour says so with `legacy_application`, naming the
entry of `applications` that plays the one application it knew. Drop this module once no colour needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.config import Config, application, cluster_name, preview_hostname, public_hostname
from model.contract import CommonOutput
from model.platform import CHILDREN
from model.values import APPS_PATH, SYNC_RETRY
from model.workloads import WORKLOADS

CONTRACT_1 = 1


def legacy_facts(*, config: Config, colour: str, common: Callable[[str], str]) -> dict[str, Any]:
    """The facts the release before handed this colour, to the key: only where they come from has changed."""
    cluster = config.clusters[colour]
    assert cluster.legacy_application is not None
    app = application(config, cluster.legacy_application)
    assert app.config.image is not None  # model/config/: the legacy application has an image of the project's
    release = config.release(colour)
    name = cluster_name(config, colour)
    return {
        "contractVersion": CONTRACT_1,
        "git": {"repoURL": config.gitops.repo_url, "targetRevision": release.gitops_revision, "path": APPS_PATH},
        "cluster": {
            "name": name,
            "region": config.region,
            "vpcId": common(CommonOutput.VPC_ID),
            "vpcCidr": config.network.cidr,
            "colour": colour,
        },
        "dns": {
            "zoneName": common(CommonOutput.ZONE_NAME),
            "hostname": public_hostname(config, app),
            "previewHostname": preview_hostname(config, app, colour),
            "txtOwnerId": name,
            "syncInterval": f"{config.traffic.sync_interval_seconds}s",
        },
        "ingress": {
            "certificateArn": common(CommonOutput.CERTIFICATE_ARN),
            "weight": cluster.weight,
            "setIdentifier": colour,
            "ttl": config.traffic.record_ttl,
        },
        # Contract 1's charts know the application's binding by the name of its component: the application's name.
        "identities": {
            **{w.name: {"namespace": w.namespace, "serviceAccount": w.service_account} for w in WORKLOADS},
            app.name: {"namespace": app.namespace, "serviceAccount": app.service_account},
        },
        "sampleApp": {
            "tableName": common(CommonOutput.TABLE_NAME),
            "image": {"repository": common(app.image_output), "tag": release.applications[app.name].image_tag},
        },
        "platform": {c.name: release.platform.version(c) for c in CHILDREN},
        "syncRetry": SYNC_RETRY,
    }


def binding(config: Config, colour: str, target_group_arn: str) -> dict[str, Any]:
    """The TargetGroupBinding a contract-1 colour's charts do not make: Terraform applies it, so the colour's pods
    join its target group of the shared load balancer beside its own load balancer (the same pods behind both)."""
    cluster = config.clusters[colour]
    assert cluster.legacy_application is not None
    app = application(config, cluster.legacy_application)
    return {
        "apiVersion": "elbv2.k8s.aws/v1beta1",
        "kind": "TargetGroupBinding",
        "metadata": {"name": app.name, "namespace": app.namespace},
        "spec": {
            "targetGroupARN": target_group_arn,
            "targetType": "ip",
            "serviceRef": {"name": app.service_name, "port": app.config.service.port},
        },
    }
