"""Move the app's traffic to one colour in steps, each gated on that colour's load balancer metrics.

    python -m tools.shift --to green [--step 20] [--interval 300] [--dry-run] [--skip-readiness]

Before any weight moves, the target must prove itself ready (tools/readiness.py), and each colour the
shift touches is planned at its current weights: a change pending there (a release bump, an edit, drift)
refuses the shift, naming it (dry run too). Per step: write the colours' weights into the config,
`cdktf synth`, plan each colour whose weight changes, and apply those very plans only if they change
nothing but weights; wait until Route53 serves the new weights (ExternalDNS writes them from the
Ingress) and the record TTL has passed, watch the target's ALB for the interval, then judge its
CloudWatch metrics against `traffic.shift`. On a breach, a failed apply or a Route53 timeout it restores
the previous step's weights the same way and exits 1 with the reason. Unsafe requests are refused
before anything changes (exit 2); so is a step whose plan changes more than the weights: nothing of it
is applied and the config is back at the previous step's weights, which stay in place (exit 2).

One room each: plan.py (the weights of each step), gate.py (what a window must show), metrics.py
(reading a window from CloudWatch), deploy.py (synth, plan, apply the plan), pending.py (what a plan
changes, and whether it is weights only), run.py (the steps, the waits, the roll-back), command.py
(the command line); `python -m tools.shift` runs command.py.
"""

from __future__ import annotations


class UnsafeShiftError(Exception):
    """The request is unsafe or impossible; nothing was changed (by a refused step: nothing of it; the message
    names the weights in place)."""


class ShiftError(Exception):
    """A step failed; the message says why and which weights are in place."""
