"""The few Kubernetes API calls the teardown makes, over HTTPS with an EKS token: no kubectl needed.

The token is what `aws eks get-token` prints: a presigned STS GetCallerIdentity URL bound to
the cluster name. A fresh one is made per request, so a long teardown never outlives it.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

APPLICATIONS = "/apis/argoproj.io/v1alpha1/namespaces/{namespace}/applications"
# The load balancer controller's bindings of a Service to a target group (its CRD, elbv2.k8s.aws/v1beta1).
TARGET_GROUP_BINDINGS = "/apis/elbv2.k8s.aws/v1beta1/targetgroupbindings"
TARGET_GROUP_BINDINGS_IN = "/apis/elbv2.k8s.aws/v1beta1/namespaces/{namespace}/targetgroupbindings"
# An application's Service (its pod selector) and its namespace's pods (readiness: their target-health gates).
SERVICE_IN = "/api/v1/namespaces/{namespace}/services/{name}"
PODS_IN = "/api/v1/namespaces/{namespace}/pods"
# An application's volumes: its namespace's claims, and the cluster's PersistentVolumes bound to them.
CLAIMS_IN = "/api/v1/namespaces/{namespace}/persistentvolumeclaims"
VOLUMES = "/api/v1/persistentvolumes"
_TOKEN_PREFIX = "k8s-aws-v1."
_CLUSTER_HEADER = "x-k8s-aws-id"


class KubeError(Exception):
    """The Kubernetes API could not be reached or refused a request."""


def eks_token(session: Any, cluster: str, region: str) -> str:
    """A bearer token for an EKS cluster from the session's credentials (boto3.Session)."""
    from botocore.signers import RequestSigner  # lazy: the SDK loads once a cluster is called, not for --help

    sts = session.client("sts", region_name=region)
    signer = RequestSigner(sts.meta.service_model.service_id, region, "sts", "v4", session.get_credentials(), session.events)
    request = {
        "method": "GET",
        "url": f"{sts.meta.endpoint_url}/?Action=GetCallerIdentity&Version=2011-06-15",
        "body": {},
        "headers": {_CLUSTER_HEADER: cluster},
        "context": {},
    }
    url = signer.generate_presigned_url(request, region_name=region, expires_in=60, operation_name="")
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")


class KubeApi:
    def __init__(self, server: str, token: Callable[[], str], context: ssl.SSLContext | None, timeout: float = 30) -> None:
        self.server = server.rstrip("/")
        self._token = token
        self._context = context
        self._timeout = timeout

    @classmethod
    def for_eks(cls, session: Any, eks: Any, cluster: str, region: str) -> KubeApi:
        description = eks.describe_cluster(name=cluster)["cluster"]
        authority = base64.b64decode(description["certificateAuthority"]["data"]).decode()
        context = ssl.create_default_context(cadata=authority)
        return cls(description["endpoint"], lambda: eks_token(session, cluster, region), context)

    def get(self, path: str) -> dict[str, Any] | None:
        """The object, or None when it does not exist."""
        return self._call("GET", path)

    def delete(self, path: str) -> None:
        self._call("DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"})

    def merge_patch(self, path: str, patch: dict[str, Any]) -> None:
        self._call("PATCH", path, patch, content_type="application/merge-patch+json")

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, content_type: str = "application/json"
    ) -> dict[str, Any] | None:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self._token()}", "Accept": "application/json", "Content-Type": content_type}
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout, context=self._context) as response:
                payload = response.read()
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise KubeError(f"{method} {path}: HTTP {err.code} {err.read()[:300]!r}") from None
        except (urllib.error.URLError, OSError) as err:
            raise KubeError(f"{method} {self.server}{path}: {err}") from None
        result: dict[str, Any] = json.loads(payload) if payload else {}
        return result
