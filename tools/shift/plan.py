"""The shift's plan: the weights after each step, until the target holds all the traffic."""

from __future__ import annotations

import math
from collections.abc import Mapping

from model.config import MAX_WEIGHT
from tools.shift import UnsafeShiftError

Weights = dict[str, int]


def plan_weights(weights: Mapping[str, int], target: str, step: int) -> list[Weights]:
    """The weights after each step, until the other colours hold nothing.

    Each step the other colours give up `step` between them (in proportion to what they hold)
    and the target gains `step`, up to the total it started from (at most 255, Route53's
    limit). So blue 100 / green 0 by 20 goes 80/20, 60/40 ... 0/100, and every step sends a
    larger share to the target while leaving some weight above 0.
    """
    if not 1 <= step <= MAX_WEIGHT:
        raise UnsafeShiftError(f"--step: {step} is not allowed; use 1-{MAX_WEIGHT} (weight moved per step)")
    if target not in weights:
        raise UnsafeShiftError(f"--to: {target!r} is not a configured colour; use one of {', '.join(weights)}")
    if sum(weights.values()) == 0:
        raise UnsafeShiftError(
            "every weight is 0 (the load balancer would have nowhere to send a request): give the serving colour its "
            "weight with `python -m tools.shift --to <colour> --now`"
        )
    ceiling = min(MAX_WEIGHT, sum(weights.values()))
    plan: list[Weights] = []
    current = dict(weights)
    while others := {colour: w for colour, w in current.items() if colour != target and w}:
        gained = min(ceiling, current[target] + step)
        kept = _spread(max(0, sum(others.values()) - step), others)
        current = {colour: gained if colour == target else kept.get(colour, 0) for colour in weights}
        plan.append(current)
    return plan


def _spread(amount: int, weights: Mapping[str, int]) -> Weights:
    """Share `amount` out in proportion to `weights` (largest remainder, so it adds up exactly)."""
    held = sum(weights.values())
    if held == 0:
        return dict.fromkeys(weights, 0)
    exact = {colour: amount * w / held for colour, w in weights.items()}
    shares = {colour: math.floor(x) for colour, x in exact.items()}
    by_remainder = sorted(weights, key=lambda colour: exact[colour] - shares[colour], reverse=True)
    for colour in by_remainder[: amount - sum(shares.values())]:
        shares[colour] += 1
    return shares
