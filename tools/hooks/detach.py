"""Destroy-time hook of each target group of the traffic stack: before Terraform deletes a colour's target group of an
application, take it out of the application's public rule, under the traffic lock.

Why: AWS refuses to delete a target group a rule forwards to (ResourceInUse), and the public rule's action belongs to
the shift once the rule exists (Terraform ignores it: components/application_routes.py), so a traffic deploy without
a colour would fail half-way, after the colour's preview hosts are gone. A retire's teardown detaches its colour
already (tools/hooks/teardown.py); this covers every other way a target group goes: a colour removed from the configuration
after its retire failed part-way, a colour added and removed before it was deployed, an application removed, a
target group replaced. It takes out only a target group the rule gives no weight: one that still carries traffic
stops the deploy, before anything of it is deleted, and says how to drain it. Once no rule forwards to the colour, it
takes the colour (at weight 0) out of the live weights too: a colour that is gone is not kept there.

Terraform runs it from the `terraform_data` beside each target group (components/application_routes.py), which
depends on the target group, so on destroy it runs first; the public rule depends on it, so when the whole
application goes, the rule goes before and there is nothing to detach. Exit 0: detached, or nothing forwards to it
(each says so); 2: refused (weight, the lock held by anything but another detach of the same deploy, which it waits
for) or it could not tell (no usable input, no credentials, an API
error), with one line on stderr and nothing changed: Terraform then stops before the target group, and the next
deploy runs it again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TextIO

from model.routes import DETACH_ENV
from tools.aws import Aws
from tools.cli import exit_status
from tools.clock import Clock, SystemClock
from tools.hooks.hook_input import HookInputError, hook_input
from tools.live_routes import RoutesError, read_routes
from tools.live_weights import colour_weights, read_live, write_live
from tools.traffic_lock import LockedError, TrafficLock

PREFIX = "detach"
DETACH_WHAT = "traffic deploy: detach "  # the lock's `what` of a detach, which another detach waits for
# How long a detach waits for the others of the same deploy: Terraform destroys the instances of one application's
# hook (one per colour) and those of other applications in parallel, each a few seconds under the lock.
DETACH_WAIT_SECONDS = 300


class StillServingError(Exception):
    """The target group still carries traffic (or the lock is held): nothing was changed."""


@dataclass(frozen=True)
class DetachInput:
    project: str
    region: str
    application: str
    colour: str
    target_group_arn: str


def detach(given: DetachInput, *, elbv2: Any, ssm: Any, sts: Any, clock: Clock, out: TextIO) -> str:
    """Take the target group out of its application's public rule, and the colour out of the live weights once no rule
    forwards to it (at weight 0: a retired or removed colour is not kept there); returns what was done."""
    what = f"{given.colour}'s target group of {given.application}"

    def forwarding() -> tuple[Any, dict[str, Any]] | None:
        """The public rule and its forward as it is now, when it forwards to the target group; else None."""
        try:
            routes = read_routes(elbv2, given.project)
        except RoutesError:
            return None  # no shared load balancer (any more): nothing forwards anywhere
        route = routes.public.get(given.application)
        if route is None or given.target_group_arn not in route.target_groups.values():
            return None
        (rule,) = elbv2.describe_rules(RuleArns=[route.rule_arn])["Rules"]
        forward = next(action for action in rule["Actions"] if action["Type"] == "forward")
        return route, forward

    def weights() -> dict[str, int]:
        try:
            return colour_weights(ssm, given.project)
        except RoutesError:
            return {}  # no parameter (any more)

    def forwarded_anywhere() -> bool:
        try:
            return any(given.colour in route.weights for route in read_routes(elbv2, given.project).public.values())
        except RoutesError:
            return False

    if forwarding() is None and weights().get(given.colour) != 0:
        # Nothing to write: no rule forwards to it, and the live weights either forget the colour already or still
        # give it weight (its whole application went, rule first): no lock is taken for nothing.
        return f"{what}: no public rule forwards to it"
    done = []
    lock = TrafficLock(ssm, sts, given.project, f"{DETACH_WHAT}{what}", clock)
    try:
        with _held_after_other_detaches(lock, clock, out):
            found = forwarding()  # again, under the lock: a shift may have moved weight meanwhile
            if found is not None:
                route, forward = found
                weight = route.weights.get(given.colour, 0)
                if weight:
                    raise StillServingError(
                        f"{given.colour} still has weight {weight} in {given.application}'s public rule, so its target "
                        f"group cannot go: shift its traffic away first (python -m tools.shift --to <colour>), then deploy "
                        "traffic again; nothing was deleted"
                    )
                config = dict(forward.get("ForwardConfig") or {})
                kept = [t for t in config.get("TargetGroups", []) if t["TargetGroupArn"] != given.target_group_arn]
                if not kept:
                    raise StillServingError(
                        f"{given.application}'s public rule forwards to {what} alone; a rule needs a target group: deploy "
                        "traffic with the application's other colours, or remove the application (its rule goes first)"
                    )
                elbv2.modify_rule(
                    RuleArn=route.rule_arn, Actions=[{"Type": "forward", "ForwardConfig": {**config, "TargetGroups": kept}}]
                )
                done.append(f"taken out of {given.application}'s public rule (it had no weight)")
            live = weights()
            if given.colour in live and not live[given.colour] and not forwarded_anywhere():
                write_live(ssm, given.project, read_live(ssm, given.project).without(given.colour))
                done.append(f"{given.colour} (weight 0, in no rule) taken out of the live weights")
    except LockedError as err:
        raise StillServingError(f"{err}; {what} stays, and the deploy stopped before deleting it") from None
    return f"{what}: {'; '.join(done) or 'no public rule forwards to it'}"


@contextmanager
def _held_after_other_detaches(lock: Any, clock: Clock, out: TextIO) -> Iterator[None]:
    """The traffic lock, held; while another detach holds it (the same deploy's, in parallel), waited for, up to
    DETACH_WAIT_SECONDS. Any other holder (a shift, a drain, a teardown) refuses at once: LockedError."""
    deadline = clock.now() + timedelta(seconds=DETACH_WAIT_SECONDS)
    while True:
        try:
            with lock.held(say=lambda line: print(f"{PREFIX}: {line}", file=out, flush=True)):
                yield
            return
        except LockedError:
            holder = lock.holder()
            # Released meanwhile (None): try again at once.
            if holder is not None and (not holder.what.startswith(DETACH_WHAT) or clock.now() >= deadline):
                raise
            if holder is not None:
                clock.sleep(1)


def main(environ: dict[str, str] | None = None, out: TextIO = sys.stdout) -> int:
    env = os.environ if environ is None else environ
    try:
        given = hook_input(DetachInput, env.get(DETACH_ENV, ""), variable=DETACH_ENV)
    except HookInputError as err:
        print(f"{PREFIX}: refused: {err}; nothing was changed", file=sys.stderr)
        return 2
    aws = Aws(given.region)

    def run() -> None:
        done = detach(given, elbv2=aws.elbv2, ssm=aws.ssm, sts=aws.sts, clock=SystemClock(), out=out)
        print(f"{PREFIX}: {done}", file=out, flush=True)

    return exit_status(run, refused=(StillServingError,), failed=(), prefix=f"{PREFIX} ")


if __name__ == "__main__":
    sys.exit(main())
