"""What the configuration's sections are built of: the frozen, strict model every section is, how the reference shows
a derived default, read-only mappings, and the patterns and bounds several sections share (each with the words a
refusal says, `Allowed`)."""

# No `from __future__ import annotations` in model/config/: pydantic reads these annotations as objects, with their
# metadata.
import re
from typing import Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, WrapSerializer

from model.problems import frozen_mapping
from model.routes import TRAFFIC_STACK

# Values CloudWatch Logs accepts for retention_in_days.
LogRetentionDays = Literal[
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653
]
# The common stack's id; a colour may not take it (nor the traffic stack's).
COMMON_STACK = "common"
MAX_WEIGHT = 255  # Route53 weighted records accept 0-255 (an ALB's weighted forward 0-999): the smaller range.
# A colour is a stack name and a DNS label (model/config/clusters.py checks it; the JSON Schema shows it).
COLOUR_PATTERN = rf"^(?!({COMMON_STACK}|{TRAFFIC_STACK})$)[a-z]([a-z0-9-]{{0,18}}[a-z0-9])?$"
COLOUR = re.compile(COLOUR_PATTERN)
LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
IMAGE_TAG = r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$"
IMAGE_TAG_ALLOWED = "use an image tag (letters, digits, '._-')"
REVISION = r"^\s*\S"
REVISION_ALLOWED = "name a branch, tag or commit"
REGION_PATTERN = r"^[a-z]{2}(-[a-z]+)+-\d{1,2}$"
REGION_ALLOWED = "use an AWS region code such as 'ap-northeast-1'"
LABEL_ALLOWED = "use one DNS label: lowercase letters, digits, '-'"
# A Git URL, or the prefix of some (a credential's `url`): what Argo CD clones, https, ssh or scp-like.
GIT_URL = r"^(https://|ssh://|git@)\S+$"
GIT_URL_ALLOWED = "use a Git URL Argo CD can clone (https://, ssh:// or git@)"


class Section(BaseModel):
    """Frozen, strict (`"100"` is no integer, `true` no weight), no unknown keys. Patterns run on
    Python's `re`, which has the look-ahead some of them need (pydantic's default engine has none). Built at first
    validation, not at import (defer_build): an operator command's `--help` and its refusals load the models without
    paying for their validators (~0.2 s of its start; make bench's "operator commands load")."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, regex_engine="python-re", defer_build=True)


class Shown:
    """How the configuration reference shows a default that is derived or long (`<project>-users`)."""

    def __init__(self, text: str) -> None:
        self.text = text


# A mapping setting is read-only once validated, and serializes as the JSON object it came from.
FROZEN = AfterValidator(frozen_mapping)
AS_DICT = WrapSerializer(lambda value, serialize: serialize(dict(value)))
