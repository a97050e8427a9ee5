"""The `dns` section: the parent zone and the sub-zone common makes under it."""

from typing import Annotated

from pydantic import Field

from model.config.fields import LABEL, LABEL_ALLOWED, Section
from model.problems import Allowed


class DnsConfig(Section):
    parent_zone: Annotated[
        str,
        Field(
            pattern=rf"^{LABEL}(\.{LABEL})*$",
            description="an existing public hosted zone in the account, lowercase, no trailing dot",
        ),
        Allowed("name an existing public hosted zone such as 'example.com' (lowercase, no trailing dot)"),
    ] = "example.com"
    sub_domain: Annotated[
        str,
        Field(pattern=f"^{LABEL}$", description="one DNS label; the sub-zone is `<sub_domain>.<parent_zone>`"),
        Allowed(LABEL_ALLOWED),
    ] = "eks"

    @property
    def zone_name(self) -> str:
        return f"{self.sub_domain}.{self.parent_zone}"
