"""Move the app's traffic to one colour in steps, each gated on that colour's load balancer metrics.

    python -m tools.shift --to green [--step 20] [--interval 300] [--dry-run] [--skip-readiness]

Before any weight moves, the target must prove itself ready (tools/readiness.py): its EKS cluster
ACTIVE with no upgrade insight in ERROR, every Argo CD Application Synced and Healthy, healthy
targets behind its load balancer. Anything missing is named and nothing changes.

Per step: write the colours' weights into the config, `cdktf deploy` the colours whose weight
changed, wait until Route53 serves the new weights (ExternalDNS writes them from the Ingress)
and the record TTL has passed, watch the target's ALB for the interval, then judge its
CloudWatch metrics against `traffic.shift`. On a breach, a failed deploy or a Route53 timeout
it restores the previous step's weights the same way and exits 1 with the reason. Unsafe
requests are refused before anything changes (exit 2). Defaults come from `traffic.shift`.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn, TextIO

from model.config import MAX_WEIGHT, MIN_SHIFT_INTERVAL_SECONDS, Config, ShiftConfig, cluster_name
from model.loading import ConfigError, load_config, write_weights
from model.workloads import ARGOCD_NAMESPACE, PARENT_APPLICATION
from tools import readiness
from tools.aws import load_balancer_for, weighted_records, zone_id
from tools.cli import exit_status, run_cdktf
from tools.clock import POLL_SECONDS, Clock, SystemClock
from tools.kube import KubeApi

# CloudWatch publishes ALB metrics per minute, about a minute late: a window is read this long after it closes.
METRICS_DELAY_SECONDS = 60

Weights = dict[str, int]
Deploy = Callable[[Sequence[str]], None]


class UnsafeShiftError(Exception):
    """The request is unsafe or impossible; nothing was changed."""


class ShiftError(Exception):
    """A step failed; the message says why and which weights are in place."""


@dataclass(frozen=True)
class Aws:
    route53: Any
    elbv2: Any
    cloudwatch: Any
    eks: Any
    kube: Callable[[str], KubeApi] | None = None  # a cluster's Kubernetes API, by cluster name

    @classmethod
    def connect(cls, region: str) -> Aws:
        import boto3

        session = boto3.Session(region_name=region)
        route53, elbv2, cloudwatch, eks = (session.client(name) for name in ("route53", "elbv2", "cloudwatch", "eks"))
        return cls(route53, elbv2, cloudwatch, eks, lambda cluster: KubeApi.for_eks(session, eks, cluster, region))


@dataclass(frozen=True)
class WindowMetrics:
    requests: float
    errors: float  # 5xx from the targets plus 5xx the load balancer answered itself
    p99: float | None  # TargetResponseTime p99, seconds; None without requests


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
            "every weight is 0 (Route53 would split evenly): set the serving colour's weight and deploy it first"
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


def is_idle(metrics: WindowMetrics, settings: ShiftConfig) -> bool:
    """Too few requests to judge the target by."""
    return metrics.requests < settings.min_requests


def judge(metrics: WindowMetrics, settings: ShiftConfig) -> str | None:
    """Why the window fails the gate, or None when it passes. A quiet window is no evidence: it fails
    unless idle windows are allowed (traffic.shift.allow_idle, --allow-idle)."""
    if is_idle(metrics, settings) and not settings.allow_idle:
        return (
            f"{metrics.requests:.0f} requests in the window, fewer than traffic.shift.min_requests "
            f"{settings.min_requests}: too little traffic to judge (send traffic to the target, or let quiet "
            "windows pass with --allow-idle or traffic.shift.allow_idle)"
        )
    if metrics.requests > 0 and metrics.errors / metrics.requests > settings.max_5xx_ratio:
        ratio = metrics.errors / metrics.requests
        return (
            f"5xx ratio {ratio:.2%} ({metrics.errors:.0f} of {metrics.requests:.0f} requests) "
            f"above traffic.shift.max_5xx_ratio {settings.max_5xx_ratio:.2%}"
        )
    if metrics.p99 is not None and metrics.p99 > settings.max_p99_seconds:
        return f"p99 response time {metrics.p99:.3f} s above traffic.shift.max_p99_seconds {settings.max_p99_seconds:.3f} s"
    return None


def read_metrics(cloudwatch: Any, dimension: str, start: datetime, period: int) -> WindowMetrics:
    """Totals of one ALB (CloudWatch `LoadBalancer` dimension) over [start, start + period), one period.

    start is a whole minute and period a multiple of 60 s: ALB metrics are kept per minute.
    """

    def query(query_id: str, metric: str, stat: str) -> dict[str, Any]:
        name = {"Namespace": "AWS/ApplicationELB", "MetricName": metric}
        dimensions = [{"Name": "LoadBalancer", "Value": dimension}]
        return {"Id": query_id, "MetricStat": {"Metric": {**name, "Dimensions": dimensions}, "Period": period, "Stat": stat}}

    response = cloudwatch.get_metric_data(
        MetricDataQueries=[
            query("requests", "RequestCount", "Sum"),
            query("target5xx", "HTTPCode_Target_5XX_Count", "Sum"),
            query("elb5xx", "HTTPCode_ELB_5XX_Count", "Sum"),
            query("p99", "TargetResponseTime", "p99"),
        ],
        StartTime=start,
        EndTime=start + timedelta(seconds=period),
    )
    values = {result["Id"]: [v for v in result["Values"] if v is not None] for result in response["MetricDataResults"]}
    p99 = values.get("p99", [])
    return WindowMetrics(
        requests=sum(values.get("requests", [])),
        errors=sum(values.get("target5xx", [])) + sum(values.get("elb5xx", [])),
        p99=max(p99) if p99 else None,
    )


def cdktf_deploy(colours: Sequence[str], *, cwd: Path) -> None:
    """The real deploy: the pinned cdktf CLI, as a user would run it, one stack at a time, in the order
    given. (Given several stacks the CLI deploys them at once, and Terraform's plugin cache is not safe
    under concurrent `terraform init`: hashicorp/terraform issue 31964.)"""
    for done, colour in enumerate(colours):
        arguments = ["deploy", colour, "--auto-approve"]
        status = run_cdktf(arguments, cwd=cwd)
        if status != 0:
            deployed = f"; {', '.join(colours[:done])} deployed before it" if done else ""
            raise ShiftError(f"`cdktf {' '.join(arguments)}` exited {status}{deployed}")


def describe(weights: Mapping[str, int]) -> str:
    return "  ".join(f"{colour} {weight}" for colour, weight in weights.items())


@dataclass
class Shift:
    config_path: Path  # the cdktf.json the weights are written to
    config: Config
    settings: ShiftConfig
    aws: Aws
    deploy: Deploy
    clock: Clock
    out: TextIO
    skip_readiness: bool = False  # --skip-readiness: move weight without the target's proof (said loudly)

    def run(self, target: str) -> None:
        weights = self.config.weights
        plan = plan_weights(weights, target, self.settings.step)
        if not plan:
            self._say(f"{target} already has all the traffic ({describe(weights)}): nothing to do")
            return
        affected = [colour for colour in weights if any(state[colour] != weights[colour] for state in plan)]
        zone, load_balancer = self._preflight(target, affected, weights)
        self._readiness(target, load_balancer)
        unproven = " | READINESS NOT CHECKED (--skip-readiness)" if self.skip_readiness else ""
        self._say(
            f"shifting to {target}: {describe(weights)} -> {describe(plan[-1])} in {len(plan)} step(s); each step is "
            f"watched for {self.settings.interval_seconds} s ({gate(self.settings)}){unproven}"
        )
        dimension = load_balancer.split(":loadbalancer/", 1)[1]
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
            except ShiftError as err:
                self._roll_back(previous, affected, zone, f"{label}: {err}")
            # The window is whole minutes, as CloudWatch keeps ALB metrics: no datapoint half in it.
            now = self.clock.now()
            self.clock.sleep((60 - now.second - now.microsecond / 1e6) % 60)
            window_start = self.clock.now()
            self.clock.sleep(window)
            self.clock.sleep(METRICS_DELAY_SECONDS)
            metrics = read_metrics(self.aws.cloudwatch, dimension, window_start, window)
            breach = judge(metrics, s)
            left = (self.clock.now() - started) * (len(plan) - number)
            verdict = "GATE TRIPPED" if breach else "ok, IDLE (allowed)" if is_idle(metrics, s) else "ok"
            self._say(f"{label}  | {_describe_metrics(metrics)} | {verdict} | ~{_minutes(left)} left")
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
            return zone, load_balancer_for(self.aws.elbv2, live[target])[0]
        except LookupError as err:
            raise UnsafeShiftError(str(err)) from None

    def _readiness(self, target: str, load_balancer: str) -> None:
        """Refuse to move weight to a colour that has not proven itself (tools/readiness.py), naming what is missing."""
        if self.skip_readiness:
            self._say(
                f"WARNING: --skip-readiness: {target} has NOT been checked (EKS status and insights, Argo CD sync and "
                "health, healthy targets); weight may move to a colour that cannot serve it"
            )
            return
        name = cluster_name(self.config, target)
        kube = self.aws.kube
        if kube is None:
            raise UnsafeShiftError(f"no Kubernetes access to check {target}'s Argo CD applications")
        findings = readiness.check(
            eks=self.aws.eks,
            elbv2=self.aws.elbv2,
            kube=lambda: kube(name),
            cluster=name,
            load_balancer_arn=load_balancer,
            argocd_namespace=ARGOCD_NAMESPACE,
            parent_application=PARENT_APPLICATION,
        )
        self._say(f"readiness of {target}:")
        for finding in findings:
            self._say(finding.line())
        missing = [f.detail for f in findings if not f.ready]
        if missing:
            raise UnsafeShiftError(
                f"{target} has not proven itself ready for traffic: {'; '.join(missing)}. Nothing was changed; fix what "
                "is missing or wait, then run the shift again (--skip-readiness moves weight without this proof)"
            )

    def _apply(self, state: Weights, affected: list[str], zone: str) -> None:
        """Write the weights, deploy, and return once clients can be getting them."""
        before = load_config(self.config_path).weights
        write_weights(self.config_path, state)
        # Colours that gain weight first: between two deploys the total only grows, never reaching all 0.
        self.deploy(sorted(affected, key=lambda colour: before[colour] - state[colour]))
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
        except ShiftError as err:
            raise ShiftError(
                f"{reason}; the roll-back to {describe(previous)} failed too: {err}. The config holds "
                f"{describe(previous)}: run `cdktf deploy {' '.join(affected)}` and check the records"
            ) from None
        raise ShiftError(f"{reason}; rolled back to {describe(previous)}")

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def gate(settings: ShiftConfig) -> str:
    """What a step must show, as the operator reads it before the shift starts."""
    quiet = (
        f"a window with fewer than {settings.min_requests} request(s) PASSES (idle allowed)"
        if settings.allow_idle
        else f"at least {settings.min_requests} request(s)"
    )
    return f"5xx <= {settings.max_5xx_ratio:.2%}, p99 <= {settings.max_p99_seconds:.3f} s, {quiet}"


def _describe_metrics(m: WindowMetrics) -> str:
    ratio = f"{m.errors / m.requests:.2%}" if m.requests else "-"
    p99 = f"{m.p99:.3f} s" if m.p99 is not None else "-"
    return f"requests {m.requests:.0f}  5xx {ratio} ({m.errors:.0f})  p99 {p99}"


def _minutes(left: timedelta) -> str:
    return f"{math.ceil(left.total_seconds() / 60)}m"


def main(argv: Sequence[str] | None = None, *, aws: Aws | None = None, deploy: Deploy | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.shift", description=__doc__.split("\n\n")[0])
    parser.add_argument("--to", required=True, help="the colour that ends with all the traffic")
    parser.add_argument("--step", type=int, help="weight moved per step, 1-255 (default: traffic.shift.step)")
    parser.add_argument("--interval", type=int, help="seconds each step is watched (default: traffic.shift.interval_seconds)")
    parser.add_argument(
        "--allow-idle",
        action="store_true",
        help="let a window with fewer than traffic.shift.min_requests requests pass (default: traffic.shift.allow_idle)",
    )
    parser.add_argument(
        "--skip-readiness",
        action="store_true",
        help="move weight without checking that the target is ready (EKS insights, Argo CD sync and health, targets)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the plan of weights and change nothing")
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)
    return exit_status(lambda: _run(args, aws, deploy), refused=(ConfigError, UnsafeShiftError), failed=(ShiftError,))


def _run(args: argparse.Namespace, aws: Aws | None, deploy: Deploy | None) -> None:
    config = load_config(args.config)
    settings = config.traffic.shift.model_copy(
        update={
            "step": config.traffic.shift.step if args.step is None else args.step,
            "interval_seconds": config.traffic.shift.interval_seconds if args.interval is None else args.interval,
            "allow_idle": config.traffic.shift.allow_idle or args.allow_idle,
        }
    )
    if settings.interval_seconds < MIN_SHIFT_INTERVAL_SECONDS:
        raise UnsafeShiftError(
            f"--interval: {settings.interval_seconds} is not allowed; use at least {MIN_SHIFT_INTERVAL_SECONDS} s"
        )
    if args.dry_run:
        _print_plan(config, settings, args.to, skip_readiness=args.skip_readiness)
        return
    deploy = deploy or functools.partial(cdktf_deploy, cwd=args.config.resolve().parent)
    clients = aws or Aws.connect(config.region)
    Shift(args.config, config, settings, clients, deploy, SystemClock(), sys.stdout, args.skip_readiness).run(args.to)


def _print_plan(config: Config, settings: ShiftConfig, target: str, *, skip_readiness: bool) -> None:
    weights = config.weights
    plan = plan_weights(weights, target, settings.step)
    print(f"now      {describe(weights)}")
    for number, state in enumerate(plan, 1):
        print(f"step {number}/{len(plan)} {describe(state)}")
    if plan:
        print(f"each step: deploy, wait for Route53 and the TTL, watch {target}'s ALB for {settings.interval_seconds} s")
        print(f"gate: {gate(settings)}")
        if skip_readiness:
            print(f"readiness: NOT CHECKED (--skip-readiness): weight may move to {target} before it has proven itself")
        else:
            print(
                f"readiness: checked before the first step ({target}: EKS ACTIVE, no insight in ERROR, Argo CD Synced and "
                "Healthy, healthy targets)"
            )
    else:
        print(f"{target} already has all the traffic: nothing to do")


if __name__ == "__main__":
    sys.exit(main())
