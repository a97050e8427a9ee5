"""`python -m tools.shift --status`: each application's live weights and what its rule forwards, the colours' weights
(what the guards read) and what the config says beside them, and who holds the traffic lock. Reads only; needs no
colour's cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from model.config import Config, applications
from model.routes import load_balancer_name, weights_parameter
from tools.aws import Aws
from tools.live_routes import LiveRoutes, RoutesError, describe, off_weights, read_routes
from tools.live_weights import PER_COLOUR_SAID, SCHEMA, LiveWeights, read_live
from tools.shift import UnsafeShiftError
from tools.traffic_lock import TrafficLock


def status(config: Config, aws: Aws, lock: TrafficLock, out: TextIO) -> None:
    """Everything readable, printed; UnsafeShiftError (exit 2) when the weights or the rules could not be read (no
    traffic stack there: the wrong `region`, say), after printing what could."""

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    unread: list[str] = []  # what could not be read: --status then exits 2, saying it
    say(f"traffic of {config.project} (load balancer {load_balancer_name(config.project)}):")
    live: LiveWeights | None
    try:
        live = read_live(aws.ssm, config.project)
        if live.schema == SCHEMA:
            say(
                f"  live weights ({weights_parameter(config.project)}), by colour (the most any application gives it): "
                f"{describe(live.colours)}"
            )
        else:
            say(f"  live weights ({weights_parameter(config.project)}, {PER_COLOUR_SAID}): {describe(live.colours)}")
    except RoutesError as err:
        live = None
        unread.append(str(err))
        say(f"  live weights: {err}")
    declared = config.weights
    same = live is None or all(live.colours.get(colour, 0) == weight for colour, weight in declared.items())
    say(
        f"  config says:  {describe(declared)}"
        + ("" if same else "  (differs: the shift moved them since; set clusters.<colour>.weight to match)")
    )
    try:
        routes = read_routes(aws.elbv2, config.project)
    except RoutesError as err:
        unread.append(str(err))
        say(f"  rules: {err}")
    else:
        _applications(config, routes, live, say)
    holder = lock.holder()
    if holder is None:
        say("  lock: free")
    elif (stale := lock.stale_since(holder)) is not None:
        say(f"  lock: STALE since {stale:%Y-%m-%d %H:%M:%S} UTC (its holder stopped renewing it): {holder.describe()}")
    else:
        say(f"  lock: held by {holder.describe()}, lease until {holder.lease_until or '?'}")
    if unread:
        raise UnsafeShiftError(f"the traffic of {config.project} could not be read whole: {'; '.join(unread)}")


def _applications(config: Config, routes: LiveRoutes, live: LiveWeights | None, say: Callable[[str], None]) -> None:
    """One line an application: its live split, and whether its rule forwards it."""
    configured = {app.name for app in applications(config)}
    for app, route in routes.public.items():
        extra = "" if app in configured else " (not in the configuration)"
        if live is None:
            say(f"  {app}: forwards {describe(route.weights)}{extra}")
            continue
        own = live.of(app)
        if off_weights(routes, {app: own}):
            say(f"  {app}: {describe(own)}, but its rule forwards {describe(route.weights)} (DIFFERS){extra}")
        else:
            say(f"  {app}: {describe(own)} (its rule forwards it){extra}")
