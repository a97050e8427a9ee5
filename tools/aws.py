"""The operator commands' access to AWS: their clients, made on first use from one session in the project's region, a
cluster's Kubernetes API with a token of that session, and when the session's credentials end.

What an AWS SDK error means for an operator: tools/aws_problems.py. What a colour made outside the shared load
balancer: tools/leftovers.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tools.kube import KubeApi


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
    def sns(self) -> Any:
        return self.client("sns")

    @property
    def logs(self) -> Any:
        return self.client("logs")

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

    def credentials(self) -> Any:
        """The session's credentials (botocore's), or None without any: what a request outside an AWS client signs
        with (a SigV4-signed Prometheus query)."""
        return self.session().get_credentials()

    def kube(self, cluster: str) -> KubeApi:
        """The cluster's Kubernetes API (the caller's identity must be one of its admins)."""
        if self._kube is not None:
            return self._kube(cluster)
        return KubeApi.for_eks(self.session(), self.eks, cluster, self.region)


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
