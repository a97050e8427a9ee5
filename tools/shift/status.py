"""`python -m tools.shift --status`: the live weights, what each application's rule forwards, what the config says
beside them, and who holds the traffic lock. Reads only; needs no colour's cluster."""

from __future__ import annotations

from typing import TextIO

from model.config import Config
from model.routes import load_balancer_name, weights_parameter
from tools.aws import Aws
from tools.live_routes import RoutesError, read_routes, read_weights
from tools.shift import UnsafeShiftError
from tools.shift.plan import describe
from tools.shift.run import off_weights
from tools.traffic_lock import TrafficLock


def status(config: Config, aws: Aws, lock: TrafficLock, out: TextIO) -> None:
    """Everything readable, printed; UnsafeShiftError (exit 2) when the weights or the rules could not be read (no
    traffic stack there: the wrong `region`, say), after printing what could."""

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    unread: list[str] = []  # what could not be read: --status then exits 2, saying it
    say(f"traffic of {config.project} (load balancer {load_balancer_name(config.project)}):")
    try:
        live = read_weights(aws.ssm, config.project)
        say(f"  live weights ({weights_parameter(config.project)}): {describe(live)}")
    except RoutesError as err:
        live = {}
        unread.append(str(err))
        say(f"  live weights: {err}")
    declared = config.weights
    same = all(live.get(colour, 0) == weight for colour, weight in declared.items())
    say(
        f"  config says:  {describe(declared)}"
        + ("" if same or not live else "  (differs: the shift moved them since; set clusters.<colour>.weight to match)")
    )
    try:
        routes = read_routes(aws.elbv2, config.project)
        wrong = set(off_weights(routes, live)) if live else set()
        for app, route in routes.public.items():
            mark = "DIFFERS from the live weights" if any(line.startswith(f"{app}:") for line in wrong) else "in effect"
            say(f"  {app}: forwards {describe(route.weights)} ({mark})")
    except RoutesError as err:
        unread.append(str(err))
        say(f"  rules: {err}")
    holder = lock.holder()
    if holder is None:
        say("  lock: free")
    elif (stale := lock.stale_since(holder)) is not None:
        say(f"  lock: STALE since {stale:%Y-%m-%d %H:%M:%S} UTC (its holder stopped renewing it): {holder.describe()}")
    else:
        say(f"  lock: held by {holder.describe()}, lease until {holder.lease_until or '?'}")
    if unread:
        raise UnsafeShiftError(f"the traffic of {config.project} could not be read whole: {'; '.join(unread)}")
