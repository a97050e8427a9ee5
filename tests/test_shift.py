"""The traffic shift on the shared load balancer, against moto (ELBv2, SSM, CloudWatch, EKS, STS): three applications
move together, in steps or at once (--now); every application is judged on its own; the lock keeps one change at a
time; --status shows what is live. No Terraform runs and no colour's cluster is needed once the target is proven."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import os
import signal
import types
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from model.config import ShiftConfig
from model.loading import load_config
from model.platform import CHILDREN, COMPONENTS
from model.routes import WEIGHTS_DESCRIPTION, lock_path, weights_parameter
from tests.support.charts import release_applications
from tests.support.configs import PINNED_COMMIT, THREE_APPLICATIONS, validated, write_project
from tests.support.emulated_aws import (
    EXPIRED,
    PROJECT,
    REGION,
    ZONE_NAME,
    Emulated,
    FakeClock,
    WithInsights,
    aws_error,
    base_config,
    forward_all,
    minutes,
)
from tests.support.fake_kubernetes import FakeKubernetes
from tests.support.preview_server import Answer, PreviewServer, serving_green
from tools.aws import Aws
from tools.kube import KubeError
from tools.live_routes import read_routes
from tools.readiness import Readiness, release
from tools.shift import ShiftError, ShiftLockLostError, UnsafeShiftError
from tools.shift.command import main, planned_seconds
from tools.shift.run import Shift, live
from tools.signals import STOPPING, handle_stops, noted
from tools.traffic_lock import IN_FLIGHT_SECONDS, LEASE_SECONDS, Holder, LockedError, TrafficLock

# Whole shifts against moto in this process: the emulated tier (pyproject.toml's markers), beside the unit tier.
pytestmark = pytest.mark.emulated

APPS = {name: app["host"] for name, app in THREE_APPLICATIONS.items()}  # application -> host label
# Both at a commit: the shift gives weight only to a colour whose revision never moves (tests/test_immutable_revisions.py).
BLUE = {"kubernetes_version": "1.35", "weight": 100, "gitops_revision": PINNED_COMMIT}
GREEN = {"kubernetes_version": "1.36", "weight": 0, "gitops_revision": PINNED_COMMIT}


def config_of(applications: dict[str, Any] = THREE_APPLICATIONS, **shift: Any) -> dict[str, Any]:
    config = base_config(applications=applications, blue=dict(BLUE), green=dict(GREEN))
    config["traffic"] = {"shift": {"interval_seconds": 300, "max_5xx_ratio": 0.02, "max_p99_seconds": 1.0, **shift}}
    return config


class Counting:
    """A client that counts its calls by operation (a write-call budget, or a call that must never happen)."""

    def __init__(self, client: Any, *, forbidden: str = "") -> None:
        self._client, self._forbidden = client, forbidden
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name in ("exceptions", "meta", "get_paginator"):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            if self._forbidden:
                raise AssertionError(f"{self._forbidden}: {name} was called")
            self.calls.append(name)
            return attribute(*args, **kwargs)

        return call

    def count(self, name: str) -> int:
        return self.calls.count(name)


class World:
    """blue serves every application, green is deployed beside it with weight 0; both colours' pods are registered in
    their target groups. Each minute every application's target group of the target gets requests by the weight its
    rule forwards there (read from the load balancer, as the ALB would split them)."""

    def __init__(self, aws: Emulated, clock: FakeClock, *, target: str = "green", config_path: Path | None = None) -> None:
        self.aws, self.clock, self.target, self.config_path = aws, clock, target, config_path
        self.error_ratio_at: dict[tuple[str, int], float] = {}  # (application, target weight) -> 5xx ratio
        self.refused_ratio_at: dict[tuple[str, int], float] = {}  # ... -> ratio of connections the pods refuse
        self.p99_at: dict[tuple[str, int], float] = {}
        self.requests_per_weight = {app: 10 for app in APPS}  # per minute and weight point, per application
        self.unhealthy_at: tuple[str, int] | None = None  # (application, target weight) at which its pods fail
        self.drained_at: int | None = None  # target weight at which an on-call engineer drains to blue (--break-lock)
        self.insights = WithInsights(aws.eks)
        clock.on_sleep.append(self.tick)

    def tick(self, before: datetime, after: datetime) -> None:
        whole_minutes = list(minutes(before, after))
        if not whole_minutes and self.unhealthy_at is None and self.drained_at is None:
            return  # traffic is a minute's: nothing moves before the next whole minute (the shift polls every 10 s)
        forwarded = self.aws.forwarded()
        if self.drained_at is not None and forwarded["sample-app"].get(self.target) == self.drained_at:
            self.drained_at = None
            drain = ["--to", "blue", "--now", "--break-lock", "--config", str(self.config_path)]
            assert main(drain, aws=clients_of(self.aws.another_process(), None), clock=self.clock) == 0
            forwarded = self.aws.forwarded()
        data = []
        for app in APPS:
            weight = forwarded[app].get(self.target, 0)
            if self.unhealthy_at == (app, weight):
                self.aws.deregister_pods(self.target, app)
            for minute in whole_minutes:
                requests = self.requests_per_weight[app] * weight
                errors = round(requests * self.error_ratio_at.get((app, weight), 0.0))
                refused = round(requests * self.refused_ratio_at.get((app, weight), 0.0))
                p99 = self.p99_at.get((app, weight), 0.3)
                data += self.aws.app_traffic(self.target, app, minute, requests, errors, p99, connection_errors=refused)
        self.aws.put_traffic(data)  # every application's minutes in one call, as the world's tick is one moment


@pytest.fixture
def deployed(emulated: Emulated, percentiles: None) -> Emulated:
    for colour, version in (("blue", "1.35"), ("green", "1.36")):
        emulated.deploy_cluster(colour, version)
    emulated.deploy_traffic(APPS, {"blue": 100, "green": 0})
    emulated.register_pods("blue")
    emulated.register_pods("green")
    return emulated


@pytest.fixture(scope="module")
def preview() -> Iterator[PreviewServer]:
    server = serving_green(ZONE_NAME)
    yield server
    server.close()


@pytest.fixture(scope="module")
def green_runs() -> list[dict[str, Any]]:
    """green's release as its Argo CD holds it: the Applications the charts render from green's facts (once)."""
    return release_applications(validated(config_of()), "green")


@pytest.fixture
def green_ready(argocd: FakeKubernetes, green_runs: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> FakeKubernetes:
    argocd.runs(copy.deepcopy(green_runs))
    monkeypatch.setattr(release, "registry_at", lambda _: COMPONENTS)
    return argocd


def clients_of(aws: Emulated, argocd: FakeKubernetes | None, **replaced: Any) -> Aws:
    """The command's AWS clients on the emulator, with EKS insights and the fake Argo CD (None: no cluster answers)."""

    def kube(cluster: str) -> Any:
        if argocd is None:
            raise KubeError(f"cannot reach {cluster}: Connection refused")
        return argocd.api()

    clients = {
        "route53": aws.route53,
        "elbv2": aws.elbv2,
        "cloudwatch": aws.cloudwatch,
        "eks": WithInsights(aws.eks),
        "ssm": aws.ssm,
        "sts": aws.sts,
        **replaced,
    }
    return Aws(REGION, kube=kube, **clients)


ShiftIn = Callable[..., tuple[Shift, World, io.StringIO]]


@pytest.fixture
def shift_in(tmp_path: Path, green_ready: FakeKubernetes, preview: PreviewServer) -> ShiftIn:
    """A shift of blue 100 / green 0 to green on the emulated AWS, whose target is ready unless a test says otherwise."""

    def make(
        aws: Emulated, *, skip_readiness: bool = False, applications: dict[str, Any] = THREE_APPLICATIONS, **shift: Any
    ) -> tuple[Shift, World, io.StringIO]:
        path = write_project(tmp_path, config_of(applications, **shift))
        config = load_config(path)
        clock, out = FakeClock(), io.StringIO()
        world = World(aws, clock, config_path=path)
        clients = clients_of(aws, green_ready, eks=world.insights)
        checks = Readiness(config, clients, clock, prober=preview.prober(), out=lambda line: print(line, file=out))
        lock = TrafficLock(clients.ssm, clients.sts, PROJECT, "python -m tools.shift --to green", clock)
        return Shift(config, config.traffic.shift, clients, clock, out, checks, lock, skip_readiness), world, out

    return make


def step_lines(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("step ") and "| in effect" not in line]


def all_at(weights: dict[str, int]) -> dict[str, dict[str, int]]:
    return {app: weights for app in APPS}


# --- the gated shift ------------------------------------------------------------------------------


def test_every_application_moves_together_in_the_planned_steps(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, _, out = shift_in(deployed, step=25)
    elbv2, ssm = Counting(deployed.elbv2), Counting(deployed.ssm)
    shift.aws._clients.update(elbv2=elbv2, ssm=ssm)
    shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    assert deployed.live_weights() == {"blue": 0, "green": 100}
    assert [line.split("|")[0].split(None, 2)[2].strip() for line in step_lines(out)] == [
        "blue 75  green 25",
        "blue 50  green 50",
        "blue 25  green 75",
        "blue 0  green 100",
    ]
    # One change per step: the parameter, then each application's rule once (the lock's own calls are its client's).
    assert (ssm.count("put_parameter"), elbv2.count("modify_rule")) == (4, 4 * len(APPS))
    # Each application was judged on its own, from its own target group: green's requests grow with its weight.
    # 10 requests a minute per weight point: green at 25 for the 5-minute window.
    assert "    orders: requests 1250  5xx 0.00% (0)  p99 0.300 s | ok" in out.getvalue().splitlines()
    assert out.getvalue().splitlines()[-1] == "done: blue 0  green 100"
    assert deployed.ssm.get_parameters_by_path(Path="/eks-bg/traffic")["Parameters"][0]["Name"] == weights_parameter(PROJECT)


def test_a_breach_by_one_application_rolls_every_application_back_in_one_change(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=20)
    world.error_ratio_at[("orders", 60)] = 0.075  # orders breaks once green carries 60; the others are fine
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    assert str(failure.value) == (
        "step 3/5  blue 40  green 60: orders: 5xx ratio 7.50% (225 of 3000 requests) above traffic.shift.max_5xx_ratio "
        "2.00%; rolled back to blue 60  green 40"
    )
    assert deployed.forwarded() == all_at({"blue": 60, "green": 40})
    assert deployed.live_weights() == {"blue": 60, "green": 40}
    assert "    orders: requests 3000  5xx 7.50% (225)  p99 0.300 s | GATE TRIPPED" in out.getvalue()
    assert "    sample-app: requests 3000  5xx 0.00% (0)  p99 0.300 s | ok" in out.getvalue()


def test_connections_the_pods_refuse_count_as_errors_too(shift_in: ShiftIn, deployed: Emulated) -> None:
    """Pods that refuse or reset connections answer no 5xx themselves: the load balancer answers 502, counted per load
    balancer only. The target group's connection errors are the colour's own."""
    shift, world, _ = shift_in(deployed, step=50)
    world.refused_ratio_at[("sample-app", 50)] = 0.5
    with pytest.raises(ShiftError, match=r"step 1/2  blue 50  green 50: sample-app: 5xx ratio 50\.00% \(1250 of 2500 requests\)"):
        shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_slow_responses_of_one_application_roll_back_too(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, _ = shift_in(deployed, step=50)
    world.p99_at[("catalogue", 50)] = 2.5
    with pytest.raises(ShiftError, match=r"step 1/2  blue 50  green 50: catalogue: p99 response time 2\.500 s above"):
        shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_a_quiet_application_is_reported_idle_and_blocks_nothing(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=50)
    world.requests_per_weight["sample-app"] = 0  # nobody calls it; the others carry the evidence
    shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    assert out.getvalue().count("    sample-app: requests 0  5xx - (0)  p99 - | IDLE") == 2
    assert out.getvalue().count("    catalogue: requests 2500  5xx 0.00% (0)  p99 0.300 s | ok") == 1


def test_a_window_with_every_application_idle_is_no_evidence(shift_in: ShiftIn, deployed: Emulated) -> None:
    # Every application on the shift's minimum (catalogue's own 0 would make it judged even when quiet).
    applications = {name: {k: v for k, v in app.items() if k != "min_requests"} for name, app in THREE_APPLICATIONS.items()}
    shift, world, _ = shift_in(deployed, step=50, min_requests=5, applications=applications)
    world.requests_per_weight = dict.fromkeys(APPS, 0)
    with pytest.raises(ShiftError, match="every application had fewer requests than its minimum"):
        shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_quiet_windows_pass_when_asked(shift_in: ShiftIn, deployed: Emulated) -> None:
    shift, world, out = shift_in(deployed, step=50, allow_idle=True)
    world.requests_per_weight = dict.fromkeys(APPS, 0)
    shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    assert "a window in which every application is idle PASSES (idle allowed)" in out.getvalue()


def test_a_target_group_losing_its_healthy_targets_rolls_back_without_waiting_for_the_window(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    shift, world, _ = shift_in(deployed, step=50)
    world.unhealthy_at = ("catalogue", 50)  # green's catalogue pods drop out of its target group once it serves half
    with pytest.raises(ShiftError, match=r"no healthy target in green's target group of catalogue: rolled back without"):
        shift.run("green")
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert world.clock.slept < 300  # the step's 5-minute window never ran out


def test_a_login_that_expires_mid_shift_fails_the_step_and_rolls_back_in_one_line(shift_in: ShiftIn, deployed: Emulated) -> None:
    """AWS stops answering once weight has moved (CloudWatch, reading the window): the step fails and is rolled back,
    and the reason is AWS's, in one line, never a traceback."""
    shift, _, _ = shift_in(deployed)

    class Expired:
        def get_metric_data(self, **_: Any) -> Any:
            raise aws_error(EXPIRED[0], "GetMetricData", EXPIRED[1])

    shift.aws._clients["cloudwatch"] = Expired()
    with pytest.raises(ShiftError) as failed:
        shift.run("green")
    assert str(failed.value) == (
        "step 1/5  blue 80  green 20: cannot read the window's metrics: the AWS credentials have expired (GetMetricData: "
        "ExpiredToken): log in to the account (`aws sso login`, or set AWS_PROFILE or the AWS_* keys) and run the command "
        "again; rolled back to blue 100  green 0"
    )
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


@pytest.fixture
def stops_handled() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP handled as `python -m tools.shift` handles them (tools/signals.py), in this process."""
    kept = {stop: signal.getsignal(stop) for stop in STOPPING}
    handle_stops()
    yield
    for stop, handler in kept.items():
        signal.signal(stop, handler)


def stopped_at(world: World, weight: int, *, twice: bool = False) -> None:
    """A real SIGTERM to this process when the target first holds `weight` in every rule (a cancelled CI run); twice:
    another when the roll-back starts writing (the runner's second signal)."""
    sent: list[str] = []

    def tick(before: datetime, after: datetime) -> None:
        forwarded = world.aws.forwarded()
        if not sent and forwarded["sample-app"].get(world.target) == weight:
            sent.append("first")
            os.kill(os.getpid(), signal.SIGTERM)

    world.clock.on_sleep.insert(0, tick)
    if twice:
        original = world.aws.elbv2.modify_rule

        def modify_rule(**kwargs: Any) -> Any:
            if sent == ["first"]:
                sent.append("second")
                os.kill(os.getpid(), signal.SIGTERM)
            return original(**kwargs)

        world.aws.elbv2.modify_rule = modify_rule


@pytest.mark.parametrize("twice", [False, True], ids=["once", "again during the roll-back"])
@pytest.mark.usefixtures("stops_handled")
def test_a_sigterm_mid_step_rolls_the_step_back_releases_the_lock_and_says_what_is_in_place(
    shift_in: ShiftIn, deployed: Emulated, twice: bool
) -> None:
    """A cancelled CI run's SIGTERM while step 2 (green 40) is watched: the step is rolled back to step 1's weights in
    the parameter and every rule, the lock is released, and the one line says so. A second signal while the roll-back
    writes waits for it (tools/signals.py `deferred`)."""
    shift, world, _ = shift_in(deployed, step=20)
    stopped_at(world, 40, twice=twice)
    with pytest.raises(ShiftError) as failed:
        shift.run("green")
    assert str(failed.value) == "interrupted (SIGTERM); rolled back to blue 80  green 20"
    assert deployed.forwarded() == all_at({"blue": 80, "green": 20})
    assert deployed.live_weights() == {"blue": 80, "green": 20}
    assert shift.lock.holder() is None
    assert noted() == (["SIGTERM"] if twice else [])


@pytest.mark.usefixtures("stops_handled")
def test_a_sigterm_before_any_weight_moved_says_what_is_in_place_and_takes_no_lock(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stopped while readiness waits (here: while it asks EKS for the cluster): nothing moved, exit 130, one line."""
    path = write_project(tmp_path, config_of())

    class Stopping:
        def __getattr__(self, name: str) -> Any:
            os.kill(os.getpid(), signal.SIGTERM)
            return getattr(deployed.eks, name)

    aws = clients_of(deployed, None, eks=Stopping())
    assert main(["--to", "green", "--config", str(path)], aws=aws) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        "interrupted (SIGTERM): traffic in place: blue 100  green 0 (the weights parameter and every rule agree); the "
        "traffic lock is free"
    )
    assert TrafficLock(deployed.ssm, deployed.sts, PROJECT, "", FakeClock()).holder() is None
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_credentials_that_end_before_the_shift_could_are_refused_up_front(
    tmp_path: Path, deployed: Emulated, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the workflow hands over (AWS_CREDENTIAL_EXPIRATION): 40 minutes left, 5 steps of ~7 minutes plus readiness
    need more. Nothing moves and no lock is taken; with 2 hours left the same request gets past this check."""
    path = write_project(tmp_path, config_of())
    clock = FakeClock()
    monkeypatch.setenv("AWS_CREDENTIAL_EXPIRATION", f'"{(clock.now() + timedelta(minutes=40)).isoformat()}"')
    aws = clients_of(deployed, None)
    assert main(["--to", "green", "--config", str(path)], aws=aws, clock=clock) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: the AWS credentials expire at ")
    assert ", in 40 min, before this shift of 5 step(s) could finish (up to 57 min with readiness and a roll-back)" in err
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert TrafficLock(deployed.ssm, deployed.sts, PROJECT, "", FakeClock()).holder() is None
    monkeypatch.setenv("AWS_CREDENTIAL_EXPIRATION", (clock.now() + timedelta(hours=2)).isoformat())
    assert main(["--to", "green", "--dry-run", "--config", str(path)], aws=aws, clock=clock) in (0, 2)
    assert "credentials expire" not in capsys.readouterr().err
    assert planned_seconds(config_of_shift(), 5, skip_readiness=True) == 5 * (120 + 60 + 300 + 60) + 120


def config_of_shift() -> ShiftConfig:
    return validated(config_of()).traffic.shift


# --- refusals ---------------------------------------------------------------------------------------


def test_a_target_that_has_not_proven_itself_gets_no_weight_and_every_gap_is_named(
    shift_in: ShiftIn, deployed: Emulated, preview: PreviewServer
) -> None:
    deployed.deregister_pods("green", "catalogue")
    shift, _, out = shift_in(deployed)
    preview.answers[f"orders-green.{ZONE_NAME}"] = Answer(
        "green", "", path="/status", body={"colour": "green", "release": "4.2.0"}
    )
    try:
        with pytest.raises(UnsafeShiftError) as refused:
            shift.run("green")
    finally:
        preview.answers[f"orders-green.{ZONE_NAME}"] = Answer(
            "green", "", path="/status", body={"colour": "green", "release": "4.2.1"}
        )
    assert "target group of catalogue in green: no healthy target (no targets registered)" in str(refused.value)
    assert "orders-green.eks.example.com/status: green answered release '4.2.0' (expected '4.2.1')" in str(refused.value)
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.ssm.get_parameters_by_path(Path="/eks-bg/traffic")["Parameters"][0]["Name"] == weights_parameter(PROJECT)
    assert "readiness of green:" in out.getvalue()


def test_skipping_readiness_moves_weight_and_says_so_loudly(shift_in: ShiftIn, deployed: Emulated) -> None:
    deployed.deregister_pods("green", "catalogue")
    deployed.register_pods("green", "catalogue")
    shift, _, out = shift_in(deployed, step=100, skip_readiness=True)
    shift.run("green")
    assert "WARNING: --skip-readiness: green has NOT been checked" in out.getvalue()
    assert "READINESS NOT CHECKED (--skip-readiness)" in out.getvalue()


def test_a_drain_that_breaks_the_lock_of_a_running_shift_stops_it_without_another_write(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    """green breaks while the shift watches green at 40: the on-call drains to blue with --now --break-lock. The shift's
    window then sees no traffic and fails; its roll-back, its next write, finds the lock gone and stops: nothing is
    written over the drain."""
    shift, world, _ = shift_in(deployed, step=20)
    world.drained_at = 40
    with pytest.raises(ShiftLockLostError) as stopped:
        shift.run("green")
    assert str(stopped.value).startswith("step 2/5  blue 60  green 40: (every application): too little traffic")
    assert str(stopped.value).endswith(
        "; not rolled back: the traffic lock is no longer this run's (now held by nobody (it was removed)): this shift "
        "stopped before writing blue 80  green 20"
    )
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live_weights() == {"blue": 100, "green": 0}


def test_a_drain_during_the_shifts_slow_rule_write_stands(shift_in: ShiftIn, deployed: Emulated) -> None:
    """The shift's first rule write of step 1 is slow (a throttled back-off, a slow network: the drain runs while it
    waits, as the SDK prepares it): the on-call drains to blue with --break-lock meanwhile. The shift's write, fenced
    as the SDK builds its request, is never sent: the drain's split stands, and the shift says it lost the lock."""
    shift, world, _ = shift_in(deployed, step=20)
    drained: list[int] = []

    def slow(**_: Any) -> None:
        if not drained:
            drain = ["--to", "blue", "--now", "--break-lock", "--config", str(world.config_path)]
            drained.append(main(drain, aws=clients_of(deployed.another_process(), None), clock=world.clock))

    deployed.elbv2.meta.events.register("before-call.elastic-load-balancing-v2.ModifyRule", slow, unique_id="slow")
    try:
        with pytest.raises(ShiftLockLostError, match=r"the traffic lock is no longer this run's"):
            shift.run("green")
    finally:
        deployed.elbv2.meta.events.unregister("before-call.elastic-load-balancing-v2.ModifyRule", unique_id="slow")
    assert drained == [0]
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live_weights() == {"blue": 100, "green": 0}


def test_a_write_the_interrupted_shift_had_already_sent_is_overwritten_by_the_drain(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """A drain that broke a live lock watches the rules for the in-flight window: the interrupted shift's last write
    lands during it (50/50 everywhere), and the drain writes its split again; that is what stands."""
    clock = FakeClock()
    shifting = TrafficLock(deployed.ssm, deployed.sts, PROJECT, "python -m tools.shift --to green", clock)
    landed: list[bool] = []

    def in_flight(before: datetime, after: datetime) -> None:
        if not landed:
            landed.append(True)
            forward_all(deployed.elbv2, read_routes(deployed.elbv2, PROJECT), {"blue": 50, "green": 50})

    path = write_project(tmp_path, config_of())
    with shifting.held():
        clock.on_sleep.append(in_flight)
        drain = ["--to", "blue", "--now", "--break-lock", "--config", str(path)]
        assert main(drain, aws=clients_of(deployed.another_process(), None), clock=clock) == 0
    out = capsys.readouterr().out.splitlines()
    assert landed == [True]
    assert any(line.startswith("  the interrupted run's write landed (") for line in out), out
    assert out[-1] == f"in effect: blue 100  green 0 (read back for {IN_FLIGHT_SECONDS} s after taking the lock)"
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live_weights() == {"blue": 100, "green": 0}


def test_a_waiting_shift_renews_its_lease(shift_in: ShiftIn, deployed: Emulated) -> None:
    """Its clock's sleeps renew the lease: after a step's window, the lease runs well past its first end."""
    shift, world, _ = shift_in(deployed, step=100)
    leases: list[str] = []
    world.clock.on_sleep.append(lambda before, after: leases.append((shift.lock.holder() or Holder("", "", "", "")).lease_until))
    shift.run("green")
    taken = [lease for lease in leases if lease]
    assert len(set(taken)) > 3, taken  # renewed again and again while it watched the window
    assert taken == sorted(taken)
    assert shift.lock.holder() is None


def test_readiness_waiting_longer_than_the_lease_keeps_the_lock(
    shift_in: ShiftIn, deployed: Emulated, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Readiness waits too (an insights refresh, the preview probe): its sleeps renew the lease like the shift's own, so
    a check longer than the lease cannot let the lock go stale under the shift, for another run to take."""
    shift, world, _ = shift_in(deployed, step=100)
    checked = Readiness.check
    stale: list[datetime | None] = []

    def slow_check(self: Readiness, colour: str) -> Any:
        self.clock.sleep(2 * LEASE_SECONDS)
        holder = shift.lock.holder()
        stale.append(shift.lock.stale_since(holder) if holder else world.clock.now())
        return checked(self, colour)

    monkeypatch.setattr(Readiness, "check", slow_check)
    shift.run("green")
    assert stale == [None]
    assert deployed.live_weights() == {"blue": 0, "green": 100}


def test_rules_that_disagree_with_the_live_weights_refuse_the_shift(shift_in: ShiftIn, deployed: Emulated) -> None:
    deployed.ssm.put_parameter(Name=weights_parameter(PROJECT), Value='{"blue": 50, "green": 50}', Overwrite=True, Type="String")
    shift, _, _ = shift_in(deployed)
    with pytest.raises(UnsafeShiftError, match=r"not the live weights blue 50  green 50 \(a change stopped half-way\?\)"):
        shift.run("green")


def test_a_second_shift_while_one_runs_is_refused_naming_the_first(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_project(tmp_path, config_of())
    clock = FakeClock()
    first = TrafficLock(deployed.ssm, deployed.sts, PROJECT, "python -m tools.shift --to green", clock)
    with first.held():
        # The second comes from another process: the command line, as an on-call engineer would run it.
        assert main(["--to", "green", "--config", str(path)], aws=clients_of(deployed, green_ready), clock=clock) == 2
        err = capsys.readouterr().err
        assert err.startswith("refused: the traffic of eks-bg is locked by arn:aws:sts::123456789012:user/moto ")
        assert "(python -m tools.shift --to green, on " in err
        # A drain is a change of weights too.
        assert main(["--to", "blue", "--now", "--config", str(path)], aws=clients_of(deployed, None), clock=clock) == 2
        assert "is locked by arn:aws:sts::123456789012:user/moto" in capsys.readouterr().err
    # Released on exit: nothing of the lock is left, and the next one goes ahead.
    left = deployed.ssm.get_parameters_by_path(Path="/eks-bg/traffic", Recursive=True)["Parameters"]
    assert [parameter["Name"] for parameter in left] == [weights_parameter(PROJECT)]


def left_lock(aws: Emulated, number: int, lease_until: datetime) -> None:
    """A lock a killed run left: its numbered parameter, its lease ending at lease_until."""
    holder = {
        "who": "arn:aws:sts::123456789012:assumed-role/ci/run-41",
        "what": "python -m tools.shift --to green",
        "since": "2026-11-24T03:00:00+00:00",
        "where": "runner-7 pid 12",
        "token": "run-41",
        "lease_until": lease_until.isoformat(timespec="seconds"),
    }
    aws.ssm.put_parameter(Name=f"{lock_path(PROJECT)}/{number:010d}", Value=json.dumps(holder), Type="String")


def test_a_live_lock_is_taken_only_when_asked_and_said(deployed: Emulated) -> None:
    clock = FakeClock()
    left_lock(deployed, 3, clock.now() + timedelta(seconds=LEASE_SECONDS))
    lock = TrafficLock(deployed.ssm, deployed.sts, PROJECT, "python -m tools.shift --to blue --now", clock)
    refused = pytest.raises(LockedError, match=r"locked by arn:aws:sts::123456789012:assumed-role/ci/run-41 \(python -m tools")
    with refused, lock.held():
        pass
    said: list[str] = []
    with lock.held(break_lock=True, say=said.append) as mine:
        assert lock.holder() == mine
        assert lock.broke is not None
        assert lock.broke.token == "run-41"
    assert said == [
        "WARNING: --break-lock: took the traffic lock from arn:aws:sts::123456789012:assumed-role/ci/run-41 (python -m "
        "tools.shift --to green, on runner-7 pid 12) since 2026-11-24T03:00:00+00:00"
    ]
    assert lock.holder() is None
    assert deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"] == []  # nothing left behind


def test_a_dead_holders_lock_goes_stale_and_is_taken_over_saying_whose_it_was(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = FakeClock()
    left_lock(deployed, 3, clock.now() - timedelta(seconds=1))
    path = write_project(tmp_path, config_of())
    assert main(["--status", "--config", str(path)], aws=clients_of(deployed, None), clock=clock) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .startswith(
            f"  lock: STALE since {clock.now() - timedelta(seconds=1):%Y-%m-%d %H:%M:%S} UTC (its holder stopped renewing it): "
            "arn:aws:sts::123456789012:assumed-role/ci/run-41"
        )
    )
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None), clock=clock) == 0
    assert "went stale at" in capsys.readouterr().out
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})
    assert deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"] == []


class FirstListingAgain:
    """An SSM client whose first listing of the lock's path is the one taken before: a run that read the lock at the
    same moment as another, then acts on it."""

    def __init__(self, ssm: Any) -> None:
        self._ssm, self._first = ssm, ssm.get_parameters_by_path(Path=lock_path(PROJECT))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ssm, name)

    def get_paginator(self, operation: str) -> Any:
        first, self._first = self._first, None
        if first is None:
            return self._ssm.get_paginator(operation)
        return types.SimpleNamespace(paginate=lambda **_: [first])


def test_two_breakers_one_winner(deployed: Emulated) -> None:
    """Both read the same live lock and break it: the one that creates the next taking first holds it; the other is
    refused naming the winner, and never believes it holds the lock."""
    clock = FakeClock()
    left_lock(deployed, 3, clock.now() + timedelta(seconds=LEASE_SECONDS))
    late = TrafficLock(FirstListingAgain(deployed.ssm), deployed.sts, PROJECT, "python -m tools.shift --to blue --now", clock)
    first = TrafficLock(deployed.ssm, deployed.sts, PROJECT, "python -m tools.shift --to green --now", clock)
    losing = pytest.raises(LockedError, match=r"was taken meanwhile by .*\(python -m tools.shift --to green --now, on ")
    with first.held(break_lock=True, say=lambda _: None) as winner:
        with losing, late.held(break_lock=True, say=lambda _: None):
            pytest.fail("the second breaker must not hold the lock")
        assert first.holder() == winner
        first.fence()  # still the winner's


def test_a_release_that_fails_is_said_and_does_not_replace_what_happened(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """The credentials expire as the drain releases the lock: the drain is done (exit 0), and the operator reads that
    the lock goes stale by itself, not "refused ... nothing was changed"."""

    class Expiring(Counting):
        def delete_parameter(self, **_: Any) -> None:
            error = {"Error": {"Code": "ExpiredToken", "Message": "The security token included in the request is expired"}}
            raise ClientError(error, "DeleteParameter")

    path = write_project(tmp_path, config_of())
    aws = clients_of(deployed, None, ssm=Expiring(deployed.ssm))
    assert main(["--to", "green", "--now", "--config", str(path)], aws=aws) == 0
    said = capsys.readouterr()
    assert "nothing was changed" not in said.out + said.err
    assert "WARNING: the traffic lock could not be released (" in said.out
    assert "it goes stale by itself at " in said.out
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


def test_the_command_refuses_bad_requests_before_touching_aws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_project(tmp_path, config_of())
    unreachable = Aws(REGION, elbv2=None, ssm=None, sts=None, eks=None, cloudwatch=None)  # any AWS call fails loudly
    assert main(["--to", "green", "--step", "0", "--config", str(path)], aws=unreachable) == 2
    assert "refused: --step: 0 is not allowed; use 1-255" in capsys.readouterr().err
    assert main(["--to", "green", "--interval", "30", "--config", str(path)], aws=unreachable) == 2
    assert "refused: --interval: 30 is not allowed; use 60-3600 seconds" in capsys.readouterr().err
    assert main(["--to", "green", "--interval", "86400", "--config", str(path)], aws=unreachable) == 2
    assert "refused: --interval: 86400 is not allowed; use 60-3600 seconds" in capsys.readouterr().err
    assert main(["--to", "purple", "--config", str(path)], aws=unreachable) == 2
    assert "--to: 'purple' is not a configured colour" in capsys.readouterr().err


def test_a_shift_to_a_colour_that_inherits_part_of_its_release_is_refused_before_any_step(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its first step would give weight to a colour whose release the project defaults decide: the config refuses
    that (model/config/), so the shift refuses it up front."""
    config = config_of()
    del config["clusters"]["green"]["applications"]["orders"]["image_tag"]
    path = write_project(tmp_path, config)
    assert main(["--to", "green", "--step", "40", "--config", str(path)], aws=clients_of(deployed, green_ready)) == 2
    err = capsys.readouterr().err
    assert "refused: the config would refuse the weights blue 60  green 40 of this shift; nothing was changed" in err
    assert 'clusters.green: {"applications.orders.image_tag": "4.2.1"} is not allowed; green serves traffic (weight 40)' in err
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_dry_run_prints_the_plan_and_the_readiness_report_and_changes_nothing(
    tmp_path: Path, deployed: Emulated, green_ready: FakeKubernetes, preview: PreviewServer, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_project(tmp_path, config_of())
    argv = ["--to", "green", "--step", "40", "--dry-run", "--config", str(path)]
    assert main(argv, aws=clients_of(deployed, green_ready), prober=preview.prober(), clock=FakeClock()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        "now      blue 100  green 0 (live)",
        "step 1/3 blue 60  green 40",
        "step 2/3 blue 20  green 80",
        "step 3/3 blue 0  green 100",
    ]
    report = lines[lines.index("readiness of green:") + 1 :]
    # cluster, insights, parent + every platform child (the registry's) + 3 applications' children, 3 target groups,
    # 3 applications' readiness gates, 3 preview hosts
    assert len([line for line in report if line.startswith("  ok       ")]) == 2 + (1 + len(CHILDREN) + 3) + 3 + 3 + 3, report
    assert not [line for line in report if line.startswith("  MISSING")]
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


# --- the emergency drain ------------------------------------------------------------------------


def test_now_moves_every_application_in_one_change_while_the_losing_colour_does_not_answer(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """blue is broken beyond reach: its cluster is being deleted and its API refuses connections. The drain needs
    neither: one PutParameter and one ModifyRule per application, read back, exit 0."""
    deployed.ssm.put_parameter(Name=weights_parameter(PROJECT), Value='{"blue": 0, "green": 100}', Overwrite=True, Type="String")
    for rule in deployed.forwarded():
        assert rule in APPS
    path = write_project(tmp_path, config_of())
    # green serves; blue is where we go back to in a hurry: reverse the world first.
    aws = clients_of(deployed, None)
    main(["--to", "green", "--now", "--config", str(path)], aws=aws)
    capsys.readouterr()
    elbv2, ssm = Counting(deployed.elbv2), Counting(deployed.ssm)
    no_cluster = Counting(deployed.eks, forbidden="a drain needs no cluster (blue's is DELETING)")
    aws = clients_of(deployed, None, elbv2=elbv2, ssm=ssm, eks=no_cluster)
    assert main(["--to", "blue", "--now", "--config", str(path)], aws=aws) == 0
    out = capsys.readouterr().out
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live_weights() == {"blue": 100, "green": 0}
    # With the description Terraform gave it (and ignores): the overwrite changes nothing a deploy would plan back.
    (parameter,) = deployed.ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": [weights_parameter(PROJECT)]}])[
        "Parameters"
    ]
    assert parameter["Description"] == WEIGHTS_DESCRIPTION
    assert (ssm.count("put_parameter"), elbv2.count("modify_rule")) == (1 + 1, len(APPS))  # 1: the lock
    assert "WARNING: --now: all traffic to blue in one change, WITHOUT readiness or the metrics gate" in out
    assert "  orders: blue 0  green 100 -> blue 100  green 0" in out
    assert out.splitlines()[-1] == f"done in {len(APPS)} rule change(s), in effect: blue 100  green 0 (was blue 0  green 100)"


def test_now_with_dry_run_prints_each_applications_move_and_writes_nothing_not_even_the_lock(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_project(tmp_path, config_of())
    ssm, elbv2 = Counting(deployed.ssm), Counting(deployed.elbv2)
    aws = clients_of(deployed, None, ssm=ssm, elbv2=elbv2)
    assert main(["--to", "green", "--now", "--dry-run", "--config", str(path)], aws=aws) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[out.index("dry run: nothing is written. --now would move, in one change (now -> after):") + 1 :] == [
        *(f"  {app}: blue 100  green 0 -> blue 0  green 100" for app in APPS),
        "weights parameter: blue 100  green 0 -> blue 0  green 100",
    ]
    assert (ssm.count("put_parameter"), ssm.count("delete_parameter"), elbv2.count("modify_rule")) == (0, 0, 0)
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_force_without_now_is_refused_by_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_project(tmp_path, config_of())
    with pytest.raises(SystemExit) as exited:
        main(["--to", "green", "--force", "--config", str(path)], aws=Aws(REGION))
    assert exited.value.code == 2
    assert "--force applies only to a drain (--to <colour> --now --force)" in capsys.readouterr().err


def test_now_refuses_a_colour_without_healthy_targets_unless_forced(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    deployed.deregister_pods("green", "orders")
    path = write_project(tmp_path, config_of())
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 2
    assert "refused: green has no healthy target for orders: moving all traffic there would fail" in capsys.readouterr().err
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert main(["--to", "green", "--now", "--force", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert "--force: green has no healthy target for orders" in capsys.readouterr().out
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


def test_now_settles_rules_a_change_left_half_way(tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]) -> None:
    """A change that stopped half-way (one application's rule not written) refuses the gated shift; --now writes every
    rule again."""
    routes = read_routes(deployed.elbv2, PROJECT)
    half = dataclasses.replace(routes, public={app: r for app, r in routes.public.items() if app != "orders"})
    forward_all(deployed.elbv2, half, {"blue": 0, "green": 100})
    assert deployed.forwarded()["orders"] == {"blue": 100, "green": 0}
    path = write_project(tmp_path, config_of())
    assert main(["--to", "green", "--config", str(path)], aws=clients_of(deployed, None)) == 2
    assert "(a change stopped half-way?)" in capsys.readouterr().err
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert deployed.forwarded() == all_at({"blue": 0, "green": 100})


def retired_blue_and_an_undeployed_red(deployed: Emulated, tmp_path: Path) -> Path:
    """green serves; blue was retired (its teardown took its target groups out of every rule) and removed from the
    configuration, but the parameter still names it at 0; red was added (traffic made its target groups) and is in
    the configuration, never deployed and never given weight. Returns the project file of that configuration."""
    forward_all(deployed.elbv2, read_routes(deployed.elbv2, PROJECT), {"blue": 0, "green": 100}, without="blue")
    deployed.ssm.put_parameter(Name=weights_parameter(PROJECT), Value='{"blue": 0, "green": 100}', Overwrite=True, Type="String")
    deployed.add_colour("red")
    config = config_of()
    config["clusters"] = {"green": {**config["clusters"]["green"], "weight": 100}, "red": dict(GREEN)}
    return write_project(tmp_path, config)


def test_a_drain_never_writes_back_a_retired_or_undeployed_colour(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the traffic stack must be able to delete (blue's target groups, and red's if red is removed before it is
    deployed) stays out of every rule and the weights: the drain writes the configured colours in traffic."""
    path = retired_blue_and_an_undeployed_red(deployed, tmp_path)
    assert deployed.forwarded() == all_at({"green": 100})
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert deployed.forwarded() == all_at({"green": 100})
    assert deployed.live_weights() == {"green": 100}  # blue forgotten, as the configuration has; red never in traffic
    assert "  blue: not in the configuration, taken out of the weights and the rules" in capsys.readouterr().out


def test_a_colour_retired_but_still_configured_stays_out_of_the_drain_and_the_shift(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """Between `retire blue` and the merge that removes it: blue is detached (in no rule, not in the parameter) but
    still configured. Neither a drain nor a gated shift writes it back; a shift to it still may (it joins)."""
    forward_all(deployed.elbv2, read_routes(deployed.elbv2, PROJECT), {"blue": 0, "green": 100}, without="blue")
    deployed.ssm.put_parameter(Name=weights_parameter(PROJECT), Value='{"green": 100}', Overwrite=True, Type="String")
    path = write_project(tmp_path, config_of())  # blue and green, as the configuration still says
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert (deployed.forwarded(), deployed.live_weights()) == (all_at({"green": 100}), {"green": 100})
    config = validated(config_of())
    assert live(clients_of(deployed, None), config, joining="green")[1] == all_at({"green": 100})
    assert live(clients_of(deployed, None), config, joining="blue")[1] == all_at({"blue": 0, "green": 100})


def test_a_gated_shift_writes_only_configured_colours_it_gives_weight(deployed: Emulated, tmp_path: Path) -> None:
    """The rules a shift writes (forward_of): green, which holds the weight, and nothing of blue or red at 0."""
    retired_blue_and_an_undeployed_red(deployed, tmp_path)
    routes = read_routes(deployed.elbv2, PROJECT)
    forward_all(deployed.elbv2, routes, {"blue": 0, "green": 100, "red": 0}, colours=["green", "red"])
    assert deployed.forwarded() == all_at({"green": 100})
    forward_all(deployed.elbv2, routes, {"green": 80, "red": 20}, colours=["green", "red"])  # red gets some: it joins
    assert deployed.forwarded() == all_at({"green": 80, "red": 20})
    forward_all(deployed.elbv2, read_routes(deployed.elbv2, PROJECT), {"green": 100, "red": 0}, colours=["green", "red"])
    assert deployed.forwarded() == all_at({"green": 100, "red": 0})  # once in, it stays at 0 until detached


def test_a_colour_dropped_from_the_configuration_with_weight_refuses_the_gated_shift_and_the_drain_moves_it(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """blue still carries traffic, but the configuration no longer names it (removed before it was drained)."""
    config = config_of()
    config["clusters"] = {"green": {**config["clusters"]["green"], "weight": 100}}
    path = write_project(tmp_path, config)
    assert main(["--to", "green", "--config", str(path)], aws=clients_of(deployed, None)) == 2
    err = capsys.readouterr().err
    assert "refused: the live weights give blue 100, but the configuration has no such colour: move that traffic" in err
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert deployed.forwarded() == all_at({"green": 100})
    assert deployed.live_weights() == {"green": 100}


# --- what is live -------------------------------------------------------------------------------


def test_status_shows_the_live_weights_the_rules_the_config_and_the_lock(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_project(tmp_path, config_of())
    assert main(["--to", "green", "--now", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    capsys.readouterr()
    assert main(["--status", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "traffic of eks-bg (load balancer eks-bg-traffic):",
        "  live weights (/eks-bg/traffic/weights), by colour (the most any application gives it): blue 0  green 100",
        "  config says:  blue 100  green 0  (differs: the shift moved them since; set clusters.<colour>.weight to match)",
        "  sample-app: blue 0  green 100 (its rule forwards it)",
        "  catalogue: blue 0  green 100 (its rule forwards it)",
        "  orders: blue 0  green 100 (its rule forwards it)",
        "  lock: free",
    ]


def test_status_in_a_region_without_the_traffic_stack_says_so_and_fails(
    tmp_path: Path, emulated: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    """The wrong `region` (or no traffic stack yet): what could not be read, the region named, exit 2, not 0."""
    path = write_project(tmp_path, config_of())
    assert main(["--status", "--config", str(path)], aws=clients_of(emulated, None)) == 2
    said = capsys.readouterr()
    assert f"  rules: no load balancer eks-bg-traffic in {REGION}: deploy the traffic stack first" in said.out
    assert said.err.startswith("refused: the traffic of eks-bg could not be read whole: no parameter /eks-bg/traffic/weights in ")


@pytest.mark.parametrize(
    "held",
    ['{"blue": 1e400, "green": 0}', '{"blue": 100.9, "green": 0}', '{"blue": true, "green": 0}', '{"blue": 256}',
     '{"blue": -1}', '["blue"]', "blue=100", '{"blue": ' + "9" * 5000 + "}"],
)  # fmt: skip
def test_a_weights_parameter_that_is_not_whole_weights_is_refused_in_one_line(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str], held: str
) -> None:
    """1e400 was a traceback, 100.9 read as 100 and true as 1: each is refused, naming the parameter, with what it
    holds cut short, and nothing moves."""
    deployed.ssm.put_parameter(Name=weights_parameter(PROJECT), Value=held, Overwrite=True, Type="String")
    path = write_project(tmp_path, config_of())
    aws = clients_of(deployed, None)
    assert main(["--to", "green", "--skip-readiness", "--config", str(path)], aws=aws) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"refused: {weights_parameter(PROJECT)} holds ")
    assert 'not live weights ({"_schema": 2, "<colour>": <weight>, ..., "by_application": ' in line
    assert "each weight a whole number 0-255" in line
    assert len(line) < 400
    assert "sys.set_int_max_str_digits" not in line
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_the_worlds_one_call_reading_of_the_rules_is_what_the_shifts_own_reading_finds(deployed: Emulated) -> None:
    """Emulated.forwarded finds the public rules by host in one DescribeRules call (the worlds read it every simulated
    minute); the shift finds them by tags. Both read the same split, before a write and after one."""
    assert deployed.forwarded() == read_routes(deployed.elbv2, PROJECT).weights() == all_at({"blue": 100, "green": 0})
    routes = read_routes(deployed.elbv2, PROJECT)
    forward_all(deployed.elbv2, routes, {"blue": 70, "green": 30})
    assert deployed.forwarded() == read_routes(deployed.elbv2, PROJECT).weights() == all_at({"blue": 70, "green": 30})
