"""The EKS calendar (model/eks_calendar.yaml): which Kubernetes versions EKS offers, until when at the standard
rate and until when at all. The project's supported versions are its rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from model import yaml_text

CALENDAR_FILE = Path(__file__).with_name("eks_calendar.yaml")
CALENDAR_NAME = "model/eks_calendar.yaml"  # how messages name it
WARN_DAYS = 90  # a colour this close to its end of standard support is warned about at synth


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Entry):
    page: str
    read: dt.date


class KubernetesVersion(_Entry):
    version: str = Field(pattern=r"^1\.\d{2}$")
    released: dt.date
    end_of_standard_support: dt.date
    end_of_extended_support: dt.date
    source: Source

    def days_to_standard_end(self, today: dt.date) -> int:
        return (self.end_of_standard_support - today).days

    def in_extended_support(self, today: dt.date) -> bool:
        return self.end_of_standard_support <= today


class Prices(_Entry):
    standard: float
    extended: float


class Calendar(_Entry):
    price_per_hour: Prices
    versions: tuple[KubernetesVersion, ...]

    def find(self, version: str) -> KubernetesVersion | None:
        return next((v for v in self.versions if v.version == version), None)

    @property
    def supported(self) -> tuple[str, ...]:
        return tuple(v.version for v in self.versions)

    @property
    def newest(self) -> KubernetesVersion:
        return max(self.versions, key=lambda v: v.released)

    def price(self, version: str, support_type: str, today: dt.date) -> float:
        """The control plane's price per hour today: extended only past standard support, and only under EXTENDED
        (a STANDARD cluster is upgraded instead)."""
        found = self.find(version)
        extended = found is not None and found.in_extended_support(today) and support_type == "EXTENDED"
        return self.price_per_hour.extended if extended else self.price_per_hour.standard


class CalendarError(Exception):
    """The calendar file is not valid; the message names it."""


def load(path: Path = CALENDAR_FILE) -> Calendar:
    try:
        calendar = Calendar.model_validate(yaml_text.parse(path.read_text()))
    except ValidationError as err:
        raise CalendarError(f"{CALENDAR_NAME}: {err}") from None
    for row in calendar.versions:
        if not row.released < row.end_of_standard_support < row.end_of_extended_support:
            raise CalendarError(f"{CALENDAR_NAME}: {row.version}: released < end of standard < end of extended support")
    if len(set(calendar.supported)) != len(calendar.versions):
        raise CalendarError(f"{CALENDAR_NAME}: a version is listed twice")
    return calendar


CALENDAR = load()
