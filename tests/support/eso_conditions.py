"""Which namespaces a ClusterSecretStore serves, decided as External Secrets Operator decides it (external-secrets
v2.9.0, pkg/controllers/secretstore/client_manager.go: Manager.Get calls shouldProcessSecret for the namespace of the
ExternalSecret or PushSecret and refuses the store when it is false; apis/externalsecrets/v1/secretstore_types.go
ClusterSecretStoreCondition). Written from reading that code, not copied from it.

- Only a cluster-scoped store (ClusterSecretStore) has conditions; a namespaced SecretStore serves its own namespace.
- No condition: every namespace.
- Otherwise a namespace is served when any condition admits it: its `namespaceSelector` matches the namespace's
  labels, or one of its `namespaces` is the namespace's name (ESO turns each into a selector on the label
  `kubernetes.io/metadata.name`, which Kubernetes sets on every namespace), or one of its `namespaceRegexes` matches
  the name (Go's regexp.MatchString: unanchored).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tests.support.label_selectors import NAMESPACE_NAME_LABEL, selector_matches


def store_serves(store: Mapping[str, Any], namespace: str, labels: Mapping[str, str]) -> bool:
    """Whether an ExternalSecret in `namespace` (its Namespace labelled `labels`) gets secrets through `store`."""
    if store["kind"] != "ClusterSecretStore":
        return bool(store["metadata"].get("namespace") == namespace)
    conditions = store["spec"].get("conditions") or []
    if not conditions:
        return True
    labels = {**labels, NAMESPACE_NAME_LABEL: namespace}
    for condition in conditions:
        selectors = [condition["namespaceSelector"]] if condition.get("namespaceSelector") else []
        selectors += [{"matchLabels": {NAMESPACE_NAME_LABEL: name}} for name in condition.get("namespaces") or []]
        if any(selector_matches(selector, labels) for selector in selectors):
            return True
        if any(re.search(pattern, namespace) for pattern in condition.get("namespaceRegexes") or []):
            return True
    return False
