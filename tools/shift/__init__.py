"""Move applications' traffic to one colour, in steps each gated on that colour's metrics, or at once.

    python -m tools.shift --to green [--step 20] [--interval 300] [--dry-run] [--skip-readiness]
    python -m tools.shift --to green --application orders [--application web]  # only these; the others stay
    python -m tools.shift --to green --independent        # each on its own judgement, a breaching one back alone
    python -m tools.shift --to blue --now [--force] [--application orders]  # emergency: in one change, no gate
    python -m tools.shift --status                        # each application's live weights and rule, config, lock
    python -m tools.shift --history [--limit 20]          # the record: every shift and drain, newest first
    python -m tools.shift --report <id|latest> [--out DIR] # one run as charts: shift-<id>.html and .png

The weights live outside every colour, in the traffic stack's shared load balancer: one weighted rule per
application's public host, and one SSM parameter holding each application's live split (the one source of truth; no
deploy writes either; tools/live_weights.py). Weight goes only to a colour that follows a tag or a commit (one push to
a branch would reach it and every colour on that branch together; `--now --force` drains to it anyway). Under the
traffic lock, before any weight moves, the target must prove itself ready (tools/readiness/). Each moving application
(every one, or those named with --application) is planned from its own split. Per step: write the parameter, then the
moving applications' rules (one change), wait until the rules read back at the step's weights, watch the target's
target groups for the interval (a group without a healthy target rolls back at once), then judge each moving
application's CloudWatch metrics against `traffic.shift` and its analysis (`traffic.shift.analysis`,
`applications.<name>.analysis`: alarms, metric math, Prometheus, synthetic checks). After the last step, a bake window
(`bake_seconds`) holds the final split under the lock, judged the same way. A breach by any one puts every moving
application back at its previous step's weights in one change and exits 1 with the reason; with --independent only
the breaching one goes back (and advances no more) while the others go on, and the end names each outcome (exit 1 when
any went back). Unsafe requests are refused before anything changes (exit 2). No Terraform runs, and no colour's
Kubernetes API is called after the readiness check: a broken colour can always be drained, even while a shift runs
(`--now --break-lock`: the shift finds its lock gone before its next write and stops without writing).

What the operator sees (progress.py): in a terminal, the shift's lines scroll above a block of live lines, one per
application (its step, its weights, the time left in the window, its healthy and registered targets, its last window's
values with each analysis provider's value against its threshold, and the verdict), redrawn in place at every event
and every health poll, and left as the run's summary when it ends. Without one (a pipe, CI=true, TERM=dumb), no escape
code: the same lines, and after each event one plain line `[shift <id> #<sequence> <kind>] ...` naming the applications
it is about with their verdict or outcome (the id and sequence are the topic's: docs/shift-events.md); nothing per poll.

One room each: plan.py (the weights of each step), gate.py (what a window must show), judged.py (what else: each
application's analysis), metrics.py (reading a window from CloudWatch), run.py (the steps, the waits, the roll-back),
drain.py (--now), status.py (--status), events.py (each event, to the topic and every sink), progress.py (what the operator
watches), record.py (the record of
every run, --history, --report; story.py, chart.py and render.py draw a run), command.py (the command line);
`python -m tools.shift` runs command.py. tools/live_routes.py reads and writes the load balancer, tools/live_weights.py
the parameter, tools/traffic_lock.py is the lock.
"""

from __future__ import annotations

from tools import traffic_lock


class UnsafeShiftError(Exception):
    """The request is unsafe or impossible; nothing was changed."""


class ShiftError(Exception):
    """A step failed; the message says why and which weights are in place."""


class PartlyDoneError(ShiftError):
    """An independent shift in which some applications were rolled back alone: the message and `outcomes` say each
    application's."""

    def __init__(self, message: str, outcomes: dict[str, str]) -> None:
        super().__init__(message)
        self.outcomes = outcomes


class ShiftLockLostError(ShiftError, traffic_lock.LockLostError):
    """Someone took the traffic lock from a running shift (a drain with --break-lock): it stopped and wrote nothing
    more, not even a roll-back, so the weights are the new holder's."""
