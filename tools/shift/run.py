"""The shift itself: preflight, the target's readiness, the changes pending at the current weights, then step by
step: write the weights, plan each colour, refuse a plan that changes more than the weights, apply the plans,
wait for Route53 and the TTL, watch the window, judge it; on any failure, the previous step's weights back the
same way."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import NoReturn, TextIO

from model.config import Config, ShiftConfig, cluster_name
from model.loading import load_config, write_weights
from tools.aws import Aws, aws_errors_as, load_balancer_for, load_balancer_name, weighted_records, zone_id
from tools.clock import POLL_SECONDS, Clock
from tools.readiness import Readiness, missing
from tools.shift import ShiftError, UnsafeShiftError
from tools.shift.deploy import Deployer, Plan
from tools.shift.gate import describe_gate, is_idle, judge
from tools.shift.metrics import METRICS_DELAY_SECONDS, describe_metrics, read_metrics
from tools.shift.pending import Change, changes, refusals
from tools.shift.plan import Weights, describe, plan_weights, touched


@dataclass
class Shift:
    config_path: Path  # the cdktf.json the weights are written to
    config: Config
    settings: ShiftConfig
    aws: Aws
    deployer: Deployer
    clock: Clock
    out: TextIO
    readiness: Readiness  # the target's proof (tools/readiness/)
    skip_readiness: bool = False  # --skip-readiness: move weight without the target's proof (said loudly)

    def run(self, target: str, *, dry_run: bool = False) -> None:
        """dry_run: everything before the first step (preflight, readiness, what is pending), reported; no weight moves."""
        weights = self.config.weights
        plan = plan_weights(weights, target, self.settings.step)
        if not plan:
            self._say(f"{target} already has all the traffic ({describe(weights)}): nothing to do")
            return
        affected = touched(weights, plan)
        zone, load_balancer = self._preflight(target, affected, weights)
        unready = self._readiness(target)
        refuse_pending(self.deployer, affected, weights, self._say)
        if unready:
            raise unready
        if dry_run:
            self._say(f"dry run: {target} is ready and nothing is pending; the shift would start with step 1")
            return
        unproven = " | READINESS NOT CHECKED (--skip-readiness)" if self.skip_readiness else ""
        self._say(
            f"shifting to {target}: {describe(weights)} -> {describe(plan[-1])} in {len(plan)} step(s); each step is "
            f"watched for {self.settings.interval_seconds} s ({describe_gate(self.settings)}){unproven}"
        )
        dimension = load_balancer_name(load_balancer)
        previous = weights
        try:
            self._steps(plan, affected, zone, dimension, previous)
        except KeyboardInterrupt:
            raise ShiftError(
                f"interrupted; the config may hold the next step's weights: check `{self.config_path}`, then "
                f"`cdktf deploy {' '.join(affected)}` to settle on them or run the shift again"
            ) from None

    def _steps(self, plan: list[Weights], affected: list[str], zone: str, dimension: str, previous: Weights) -> None:
        s = self.settings
        window = 60 * math.ceil(s.interval_seconds / 60)  # whole minutes
        for number, state in enumerate(plan, 1):
            started = self.clock.now()
            label = f"step {number}/{len(plan)}  {describe(state)}"
            try:
                self._apply(state, affected, zone)
            except UnsafeShiftError as err:  # the step's plan changes more than the weights: nothing of it applied
                raise UnsafeShiftError(f"{label}: {err}") from None
            except ShiftError as err:
                self._roll_back(previous, affected, zone, f"{label}: {err}")
            # The window is whole minutes, as CloudWatch keeps ALB metrics: no datapoint half in it.
            now = self.clock.now()
            self.clock.sleep((60 - now.second - now.microsecond / 1e6) % 60)
            window_start = self.clock.now()
            self.clock.sleep(window)
            self.clock.sleep(METRICS_DELAY_SECONDS)
            try:
                with aws_errors_as(ShiftError):
                    metrics = read_metrics(self.aws.cloudwatch, dimension, window_start, window)
            except ShiftError as err:
                self._roll_back(previous, affected, zone, f"{label}: cannot read the window's metrics: {err}")
            breach = judge(metrics, s)
            left = (self.clock.now() - started) * (len(plan) - number)
            verdict = "GATE TRIPPED" if breach else "ok, IDLE (allowed)" if is_idle(metrics, s) else "ok"
            self._say(f"{label}  | {describe_metrics(metrics)} | {verdict} | ~{_minutes(left)} left")
            if breach:
                self._roll_back(previous, affected, zone, f"{label}: {breach}")
            previous = state
        self._say(f"done: {describe(previous)}")

    @property
    def _hostname(self) -> str:
        return self.config.dns.app_hostname

    def _preflight(self, target: str, affected: list[str], weights: Weights) -> tuple[str, str]:
        """The sub-zone's id and the target's load balancer (ARN), once all is safe."""
        for colour in affected:
            name = cluster_name(self.config, colour)
            try:
                status = self.aws.eks.describe_cluster(name=name)["cluster"]["status"]
            except self.aws.eks.exceptions.ResourceNotFoundException:
                raise UnsafeShiftError(
                    f"{colour} is not deployed: no EKS cluster {name} (run `cdktf deploy {colour}` first)"
                ) from None
            if status != "ACTIVE":
                raise UnsafeShiftError(f"{colour} is not ready: EKS cluster {name} is {status}, not ACTIVE")
        try:
            zone = zone_id(self.aws.route53, self.config.dns.zone_name)
        except LookupError as err:
            raise UnsafeShiftError(str(err)) from None
        live = weighted_records(self.aws.route53, zone, self._hostname)
        for colour in affected:
            if colour not in live:
                raise UnsafeShiftError(
                    f"Route53 has no weighted record for {self._hostname} with set identifier {colour}: "
                    f"{colour}'s ExternalDNS has not written it (is its sample app synced and its Ingress up?)"
                )
        drift = {colour: live[colour].weight for colour in affected if live[colour].weight != weights[colour]}
        if drift:
            raise UnsafeShiftError(
                f"Route53 serves {describe(drift)} but the config says {describe({c: weights[c] for c in drift})}: "
                f"deploy the config first (cdktf deploy {' '.join(affected)}) or correct it"
            )
        try:
            return zone, load_balancer_for(self.aws.elbv2, live[target])
        except LookupError as err:
            raise UnsafeShiftError(str(err)) from None

    def _readiness(self, target: str) -> UnsafeShiftError | None:
        """Report whether the target has proven itself (tools/readiness/), every line; the refusal to raise (after what
        is pending has been reported too) when it has not."""
        if self.skip_readiness:
            self._say(
                f"WARNING: --skip-readiness: {target} has NOT been checked (EKS version and insights, its release in Argo "
                "CD, healthy targets, its preview host end to end); weight may move to a colour that cannot serve it"
            )
            return None
        self._say(f"readiness of {target}:")
        findings = self.readiness.check(target)  # each line said as it is known
        if gaps := missing(findings):
            return UnsafeShiftError(
                f"{target} has not proven itself ready for traffic: {'; '.join(gaps)}. Nothing was changed; fix what is "
                "missing or wait, then run the shift again (--skip-readiness moves weight without this proof)"
            )
        return None

    def _apply(self, state: Weights, affected: list[str], zone: str) -> None:
        """Write the weights, plan every colour, apply the plans if each changes nothing but weights, and return
        once clients can be getting them. A plan that changes more is refused (UnsafeShiftError) before any is
        applied, with the config back at the weights it held. Once weights move, AWS that cannot be asked (an expired
        login, a denied call, no network) fails the step (ShiftError): it is rolled back, or the roll-back says it could
        not be; before the first step such an error refuses the shift instead (tools/cli.py: exit 2, nothing changed)."""
        with aws_errors_as(ShiftError):
            self._apply_now(state, affected, zone)

    def _apply_now(self, state: Weights, affected: list[str], zone: str) -> None:
        before = load_config(self.config_path).weights
        write_weights(self.config_path, state)
        # Colours that gain weight first: between two applies the total only grows, never reaching all 0.
        colours = sorted(affected, key=lambda colour: before[colour] - state[colour])
        self.deployer.synth()
        plans = [self.deployer.plan(colour) for colour in colours]
        refused = {plan.colour: refusals(plan.document) for plan in plans}
        if any(refused.values()):
            write_weights(self.config_path, before)
            raise UnsafeShiftError(
                f"its plan changes more than the weights, so none of it was applied and the config is back at "
                f"{describe(before)}, the weights in place:\n{_listed(refused)}\n{_on_its_own(refused)}"
            )
        for plan in plans:
            if _changes_something(plan):
                self.deployer.apply(plan)
        ttl = self._wait_for_weights(zone, {colour: state[colour] for colour in affected})
        self.clock.sleep(ttl)  # resolvers may keep the previous answer this long

    def _wait_for_weights(self, zone: str, expected: Weights) -> int:
        deadline = self.clock.now() + timedelta(seconds=self.settings.dns_timeout_seconds)
        while True:
            live = weighted_records(self.aws.route53, zone, self._hostname)
            wrong = {
                c: live[c].weight if c in live else None for c, w in expected.items() if c not in live or live[c].weight != w
            }
            if not wrong:
                return max(live[colour].ttl for colour in expected)
            if self.clock.now() >= deadline:
                serving = ", ".join(f"{c} {'no record' if got is None else got} (want {expected[c]})" for c, got in wrong.items())
                raise ShiftError(f"after {self.settings.dns_timeout_seconds} s Route53 still serves {serving}")
            self.clock.sleep(POLL_SECONDS)

    def _roll_back(self, previous: Weights, affected: list[str], zone: str, reason: str) -> NoReturn:
        self._say(f"rolling back to {describe(previous)}: {reason}")
        try:
            self._apply(previous, affected, zone)
        except UnsafeShiftError as err:
            raise ShiftError(f"{reason}; the roll-back to {describe(previous)} was refused: {err}") from None
        except ShiftError as err:
            raise ShiftError(
                f"{reason}; the roll-back to {describe(previous)} failed too: {err}. The config holds "
                f"{describe(previous)}: run `cdktf deploy {' '.join(affected)}` and check the records"
            ) from None
        raise ShiftError(f"{reason}; rolled back to {describe(previous)}")

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def refuse_pending(deployer: Deployer, colours: Sequence[str], weights: Weights, say: Callable[[str], None]) -> None:
    """Plan each colour the shift touches at the weights it has now, and report what is pending. Anything pending
    would land with the first step on a serving colour, unjudged: the shift refuses (UnsafeShiftError) before any
    weight moves."""
    try:
        deployer.synth()
        pending = {colour: changes(deployer.plan(colour).document) for colour in colours}
    except ShiftError as err:
        raise UnsafeShiftError(f"could not plan {', '.join(colours)} at the current weights: {err}. Nothing changed") from None
    found = {colour: listed for colour, listed in pending.items() if listed}
    if not found:
        say(f"pending changes at the current weights ({describe(weights)}): none in {', '.join(colours)}")
        return
    raise UnsafeShiftError(
        f"changes are pending at the current weights ({describe(weights)}), and the shift applies weights only; "
        f"nothing was changed:\n{_listed(found)}\n{_on_its_own(found)}"
    )


def _listed(found: dict[str, list[Change]]) -> str:
    return "\n".join(f"  - {colour}: {change.line()}" for colour, listed in found.items() for change in listed)


def _on_its_own(found: dict[str, list[Change]]) -> str:
    """Where a change that is not a weight goes: a deploy of its own, read first, made when the colour serves
    nothing or deliberately, so no shift window is blamed for it (or misses it)."""
    colours = [colour for colour, listed in found.items() if any(not change.weight_only for change in listed)] or list(found)
    commands = ", ".join(f"`cdktf diff {colour}` then `cdktf deploy {colour}`" for colour in colours)
    return (
        f"Deploy that on its own, outside a shift ({commands}), when the colour has no weight or deliberately; "
        "then run the shift again"
    )


def _changes_something(plan: Plan) -> bool:
    """A plan with nothing in it (a colour whose weight this step keeps) is not worth a `terraform apply`."""
    return bool(changes(plan.document))


def _minutes(left: timedelta) -> str:
    return f"{math.ceil(left.total_seconds() / 60)}m"
