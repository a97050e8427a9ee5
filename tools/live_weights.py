"""The live weights: the SSM parameter the traffic stack makes and only `python -m tools.shift` (and a colour's
teardown, taking the colour out) writes: the one source of truth of the traffic split, each application's own.

Its value (schema 2):

    {"_schema": 2, "blue": 100, "by_application": {"orders": {"blue": 100, "green": 0}, ...}, "green": 100}

- `by_application`: each application's split, by colour. An application it does not name yet (added since the last
  write) follows the colours' weights below, which is also what its new rule was created with.
- each colour's own key: the most weight any application gives it. This is what every guard reads, so a colour that
  serves even one application is protected: the node group's replacement guard of a colour stack and the traffic
  stack's configured-colours check read it in Terraform (`lookup(jsondecode(value), "<colour>", 0)`), the teardown,
  retire and CI read it here (`colour_weights`). Keeping the colours at the top, as schema 1 had them, keeps those
  Terraform readers exact across the change: an older synthesized stack reads the right weights from a new value.
- `_schema`: first in the value (sorted keys), so an older release's `python -m tools.shift`, which accepts only
  whole numbers by colour, refuses the value and shows it to its operator beginning with `"_schema": 2`, instead of
  moving every application together over per-application splits. Keys with `_` can never be colours
  (model/config COLOUR_PATTERN).

Schema 1, `{"blue": 100, "green": 0}` (every release before per-application shifts; a traffic stack deployed before
seeds it so), is read as every application at that split, and the first shift or drain under the traffic lock writes
schema 2 (the migration `per-colour-live-weights`, model/migrations/).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model.config import MAX_WEIGHT
from model.problems import capped
from model.routes import (
    BY_APPLICATION,
    WEIGHTS_DESCRIPTION,
    WEIGHTS_SCHEMA,
    WEIGHTS_SCHEMA_KEY,
    weights_parameter,
    weights_value,
)
from tools.live_routes import RoutesError, read_routes, region_of

Weights = dict[str, int]

SCHEMA = WEIGHTS_SCHEMA
SCHEMA_KEY = WEIGHTS_SCHEMA_KEY


class WeightsError(RoutesError):
    """The live weights parameter is missing or holds what this release cannot read; the message says what to do."""


@dataclass(frozen=True)
class LiveWeights:
    """The parameter's value, read: each application's split, and the colours' weights for an application it does not
    name. schema: as it was read (1: per colour only, migrated by the next write; 0: not read, made from what the
    rules forward)."""

    applications: dict[str, Weights] = field(default_factory=dict)
    colours: Weights = field(default_factory=dict)
    schema: int = SCHEMA

    def of(self, application: str) -> Weights:
        """The application's split: its own, or (not named yet) the colours' weights."""
        return dict(self.applications.get(application, self.colours))

    def updated(self, splits: Mapping[str, Mapping[str, int]], *, keep: Iterable[str] | None = None) -> LiveWeights:
        """These applications at these splits, the others as they are; keep: the applications that still exist (a
        removed application's split leaves the value, or it would hold its colour's weight up forever; None: all)."""
        applications = {app: dict(split) for app, split in self.applications.items()}
        applications.update({app: dict(split) for app, split in splits.items()})
        if keep is not None:
            kept = set(keep)
            applications = {app: split for app, split in applications.items() if app in kept}
        return LiveWeights(applications, summary(applications.values(), self.colours), SCHEMA)

    def without(self, colour: str) -> LiveWeights:
        """The colour gone from every split (a retired colour's teardown)."""
        applications = {app: {c: w for c, w in split.items() if c != colour} for app, split in self.applications.items()}
        colours = {c: w for c, w in self.colours.items() if c != colour}
        return LiveWeights(applications, summary(applications.values(), colours), SCHEMA)

    def value(self) -> str:
        """The parameter's value, schema 2 (sorted keys: `_schema` first)."""
        return weights_value(self.colours, self.applications)


def summary(splits: Iterable[Mapping[str, int]], fallback: Mapping[str, int]) -> Weights:
    """Each colour's most weight of any split (the fallback, the colours' weights as they were, when there is no
    split at all: a value naming no application keeps what it said)."""
    found: Weights = {}
    any_split = False
    for split in splits:
        any_split = True
        for colour, weight in split.items():
            found[colour] = max(found.get(colour, 0), weight)
    return found if any_split else dict(fallback)


def read_live(ssm: Any, project: str) -> LiveWeights:
    """The live weights parameter, read; WeightsError when it is missing or unreadable."""
    name = weights_parameter(project)
    try:
        value = ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ssm.exceptions.ParameterNotFound:
        raise WeightsError(
            f"no parameter {name} in {region_of(ssm)}: deploy the traffic stack first (cdktf deploy traffic), or set "
            "`region` to the region it is in"
        ) from None
    return parse(name, value)


def parse(name: str, value: str) -> LiveWeights:
    try:
        found = json.loads(value)
    except ValueError:
        found = None
    if isinstance(found, dict) and SCHEMA_KEY in found:
        schema = found[SCHEMA_KEY]
        if schema != SCHEMA:
            raise WeightsError(
                f"{name} holds live weights of schema {capped(str(schema))!r}; this release reads schema 1 and {SCHEMA}: "
                "a newer release wrote them, so run the shift from that release's checkout (nothing was changed)"
            )
        applications = found.get(BY_APPLICATION)
        colours = {k: v for k, v in found.items() if k not in (SCHEMA_KEY, BY_APPLICATION)}
        if isinstance(applications, dict) and _weights(colours) and all(_weights(s) for s in applications.values()):
            return LiveWeights({str(a): dict(s) for a, s in applications.items()}, dict(colours), SCHEMA)
    elif isinstance(found, dict) and _weights(found):
        return read_per_colour(found)
    raise WeightsError(
        f'{name} holds {capped(value)!r}, not live weights ({{"{SCHEMA_KEY}": {SCHEMA}, "<colour>": <weight>, ..., '
        f'"{BY_APPLICATION}": {{"<application>": {{"<colour>": <weight>}}}}}}, each weight a whole number '
        f"0-{MAX_WEIGHT}): write them with `python -m tools.shift --to <colour> --now`"
    )


def read_per_colour(found: Mapping[str, int]) -> LiveWeights:
    """A schema 1 value (weights by colour, every application at them): the next write makes it schema 2."""
    return LiveWeights({}, {str(colour): weight for colour, weight in found.items()}, 1)


# What the shift and --status say of a schema 1 value (the migration's words).
PER_COLOUR_SAID = "schema 1: by colour, every application at them; the next shift or drain writes them per application"


def _weights(found: object) -> bool:
    return isinstance(found, dict) and all(type(w) is int and 0 <= w <= MAX_WEIGHT for w in found.values())


def write_live(ssm: Any, project: str, live: LiveWeights) -> None:
    ssm.put_parameter(
        Name=weights_parameter(project),
        Value=live.value(),
        Description=WEIGHTS_DESCRIPTION,
        Type="String",
        Overwrite=True,
    )


def colour_weights(ssm: Any, project: str) -> Weights:
    """Each colour's live weight: the most any application gives it (what the guards read)."""
    return read_live(ssm, project).colours


def colour_weight(elbv2: Any, ssm: Any, project: str, colour: str) -> int:
    """The colour's live weight in the shared load balancer: the larger of the weights parameter's (the most any
    application gives it) and of what any application's rule forwards to it (0 without the traffic stack: then nothing
    reaches the colour through it)."""
    try:
        from_parameter = colour_weights(ssm, project).get(colour, 0)
    except RoutesError:
        from_parameter = 0
    try:
        routes = read_routes(elbv2, project)
    except RoutesError:
        return from_parameter
    return max([from_parameter, *(route.weights.get(colour, 0) for route in routes.public.values())])
