"""Kubernetes label selectors as the API machinery evaluates them (apimachinery metav1.LabelSelectorAsSelector, then
Matches), for the checkers that decide which namespaces an object applies to (tests/support/admission.py,
tests/support/eso_conditions.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Set by the API server on every Namespace, to its name, and kept so (Kubernetes "Automatic labelling").
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Every matchLabels pair and every matchExpressions requirement holds; an absent or empty selector matches all."""
    if not selector:
        return True
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for requirement in selector.get("matchExpressions") or []:
        key, operator, values = requirement["key"], requirement["operator"], requirement.get("values") or []
        held = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not held:
            return False
    return True
