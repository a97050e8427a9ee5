"""The shift and the drain as they fail in the field: the real `python -m tools.shift`, each run in its own process
against a moto server, faults injected from outside the code under test (tests/support/field: a faster clock, slow or
expiring AWS calls through botocore's own event hooks) and real signals sent to the process. Judged only by what AWS
holds afterwards (the weights parameter, every public rule, the lock's parameters) and what the operator was told."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from model.paths import PROJECT_DIR
from model.routes import lock_path, weights_parameter
from scripts.emulator import MotoProcess
from tests.support.configs import write_project
from tests.support.emulated_aws import PROJECT, REGION, Emulated
from tests.test_shift import APPS, all_at, config_of

pytestmark = pytest.mark.background

FIELD_DIR = PROJECT_DIR / "tests" / "support" / "field"
CLOCK_SCALE = 0.02  # a minute's window in 1.2 s


@pytest.fixture(scope="module")
def server() -> Iterator[MotoProcess]:
    """An emulator server of this module's own (the commands' processes reach it over HTTP)."""
    emulator = MotoProcess()
    emulator.ready()
    yield emulator
    emulator.stop()


@pytest.fixture
def world(server: MotoProcess, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulated]:
    """blue serves every application, green is deployed beside it, both healthy, both publishing healthy minutes for
    the next three hours (the commands' clock runs faster than the server's)."""
    for name, value in {"AWS_ENDPOINT_URL": server.endpoint, **CREDENTIALS}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    aws = Emulated.connect().build()
    aws.deploy_traffic(APPS, {"blue": 100, "green": 0})
    aws.register_pods("blue")
    aws.register_pods("green")
    start = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=5)
    for minute in range(180):
        for app in APPS:
            for colour in ("blue", "green"):
                aws.put_app_traffic(colour, app, start + timedelta(minutes=minute), 600, 0, 0.2)
    yield aws
    server.reset()


CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
}


def start(
    world: Emulated, config: Path, *arguments: str, faults: list[dict[str, Any]] | None = None, **more: Any
) -> subprocess.Popen[str]:
    """`python -m tools.shift <arguments> --config <config>` in a process of its own, in the field (`more`: other keys
    of tests/support/field)."""
    field = {"clock_scale": CLOCK_SCALE, **({"aws": faults} if faults else {}), **more}
    env = {
        **{k: v for k, v in os.environ.items() if k != "AWS_PROFILE"},
        "PYTHONPATH": str(FIELD_DIR),
        "FIELD": json.dumps(field),
    }
    command = [sys.executable, "-m", "tools.shift", *arguments, "--config", str(config)]
    return subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def until(process: subprocess.Popen[str], marker: str) -> list[str]:
    """The process's lines up to the first holding `marker` (fails if it ends first)."""
    assert process.stdout is not None
    said = []
    for line in process.stdout:
        said.append(line.rstrip("\n"))
        if marker in line:
            return said
    raise AssertionError(f"{marker!r} never came: {said}")


def finish(process: subprocess.Popen[str], said: list[str] | None = None) -> tuple[int, list[str]]:
    rest, _ = process.communicate(timeout=300)
    return process.returncode, [*(said or []), *rest.splitlines()]


def lock_parameters(world: Emulated) -> list[str]:
    return [p["Name"] for p in world.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"]]


def agreeing(world: Emulated) -> dict[str, int]:
    """The live weights, once the parameter and every rule agree (else the test fails, saying how they differ)."""
    weights = world.live_weights()
    assert world.forwarded() == all_at(weights), (weights, world.forwarded())
    return weights


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_project(tmp_path, config_of(interval_seconds=60))


def test_a_drain_during_a_shifts_slow_write_stands(world: Emulated, config: Path) -> None:
    """Every rule write of the shift takes 4 s (a throttled back-off, a slow network). While its first step is being
    written, the on-call drains to blue with --break-lock: the shift's next write, fenced as the SDK builds it, is
    never sent; the drain's split stands; the shift says it lost the lock, and what AWS holds."""
    shift = start(world, config, "--to", "green", "--step", "50", "--skip-readiness",
                  faults=[{"operation": "ElasticLoadBalancingv2.ModifyRule", "delay": 4}])  # fmt: skip
    said = until(shift, "shifting to green")
    time.sleep(2)
    drain = start(world, config, "--to", "blue", "--now", "--break-lock")
    drained, told = finish(drain)
    assert drained == 0, told
    assert "WARNING: --break-lock: took the traffic lock from " in "\n".join(told)
    status, said = finish(shift, said)
    assert status == 1, said
    assert any("the traffic lock is no longer this run's" in line for line in said), said
    assert said[-1].startswith("now: traffic in place: blue 100  green 0 (the weights parameter and every rule agree)")
    assert agreeing(world) == {"blue": 100, "green": 0}
    assert lock_parameters(world) == []


@pytest.mark.parametrize(
    "stop",
    [[signal.SIGTERM], [signal.SIGHUP], [signal.SIGINT, signal.SIGINT]],
    ids=["SIGTERM", "SIGHUP", "SIGINT twice"],
)
def test_a_stopped_shift_leaves_the_parameter_and_the_rules_agreeing_and_the_lock_released(
    world: Emulated, config: Path, stop: list[signal.Signals]
) -> None:
    """A cancelled CI run (SIGINT, then SIGTERM), a dropped SSH session (SIGHUP), an impatient Ctrl-C twice (the second
    during the roll-back): the step is rolled back whole, the lock released, and the last line says what is in place."""
    shift = start(world, config, "--to", "green", "--step", "50", "--skip-readiness")
    said = until(shift, "| in effect")
    for number in stop:
        shift.send_signal(number)
        time.sleep(0.05)
    status, said = finish(shift, said)
    assert status != 0, said
    assert said[-1].endswith(
        "traffic in place: blue 100  green 0 (the weights parameter and every rule agree); the traffic lock is free"
    ), said
    assert agreeing(world) == {"blue": 100, "green": 0}
    assert lock_parameters(world) == []


def test_credentials_that_expire_mid_step_are_reported_with_what_is_in_place(world: Emulated, config: Path) -> None:
    """Every AWS call fails with ExpiredToken from 20 s (the process's time) on, while step 1 is watched: the roll-back
    and the release fail too. The operator is not told "nothing was changed": the last lines say the step's split
    stands unjudged and the lock goes stale by itself."""
    shift = start(world, config, "--to", "green", "--step", "50", "--skip-readiness",
                  faults=[{"operation": "*", "expire_after": 20}])  # fmt: skip
    status, said = finish(shift)
    text = "\n".join(said)
    assert status == 1, said
    assert "nothing was changed" not in text
    assert "the roll-back to blue 100  green 0 failed too" in text, text
    assert said[-1].startswith("now: what traffic is in place could not be read ("), said
    assert "the last split this run wrote stands unjudged" in said[-1]
    assert world.live_weights() == {"blue": 50, "green": 50}  # what AWS holds: step 1, as said
    assert len(lock_parameters(world)) == 1  # its lock, going stale by itself


def test_two_breakers_one_winner(world: Emulated, config: Path) -> None:
    """A lock a killed run left, still live; two on-call engineers break it at once (each lock write slowed so both read
    the same holder first): one drain holds the lock and moves the traffic, the other is refused naming it."""
    left = {
        "who": "arn:aws:sts::123456789012:assumed-role/ci/run-41",
        "what": "python -m tools.shift --to green",
        "since": "2026-11-28T03:00:00+00:00",
        "where": "runner-7 pid 12",
        "token": "run-41",
        "lease_until": (datetime.now(UTC) + timedelta(days=1)).isoformat(timespec="seconds"),
    }
    world.ssm.put_parameter(Name=f"{lock_path(PROJECT)}/0000000005", Value=json.dumps(left), Type="String")
    slow = [{"operation": "SSM.PutParameter", "delay": 3}]
    breakers = {
        colour: start(world, config, "--to", colour, "--now", "--break-lock", faults=slow) for colour in ("blue", "green")
    }
    ended = {colour: finish(process) for colour, process in breakers.items()}
    statuses = sorted(status for status, _ in ended.values())
    assert statuses == [0, 2], ended
    (winner,) = [colour for colour, (status, _) in ended.items() if status == 0]
    (loser_said,) = [said for status, said in ended.values() if status == 2]
    assert any("was taken meanwhile by" in line for line in loser_said), loser_said
    assert agreeing(world) == {"blue": 100 if winner == "blue" else 0, "green": 100 if winner == "green" else 0}
    assert lock_parameters(world) == []


def test_now_with_dry_run_writes_nothing(world: Emulated, config: Path) -> None:
    version = world.ssm.get_parameter(Name=weights_parameter(PROJECT))["Parameter"]["Version"]
    status, said = finish(start(world, config, "--to", "green", "--now", "--dry-run"))
    assert status == 0, said
    assert "dry run: nothing is written. --now would move, in one change (now -> after):" in said
    assert world.ssm.get_parameter(Name=weights_parameter(PROJECT))["Parameter"]["Version"] == version
    assert agreeing(world) == {"blue": 100, "green": 0}
    assert lock_parameters(world) == []


def test_a_clock_five_minutes_behind_is_refused_before_any_weight_moves(world: Emulated, config: Path) -> None:
    """Its windows would be the previous step's minutes: refused, naming both clocks, nothing moved, no lock left."""
    status, said = finish(start(world, config, "--to", "green", "--skip-readiness", clock_offset_seconds=-300))
    assert status == 2, said
    assert said[-1].startswith("refused: this machine's clock ("), said
    # AWS's Date header is whole seconds and the answer takes time to arrive: 300 s may read 298-302.
    behind = re.search(r" is (\d+) s behind AWS's \(", said[-1])
    assert behind, said[-1]
    assert 298 <= int(behind.group(1)) <= 302, said[-1]
    assert agreeing(world) == {"blue": 100, "green": 0}
    assert lock_parameters(world) == []


def test_a_clock_within_the_bound_shifts(world: Emulated, config: Path) -> None:
    """10 s off is within 30 s: the shift goes through, its windows taken by AWS's clock."""
    status, said = finish(start(world, config, "--to", "green", "--step", "100", "--skip-readiness", clock_offset_seconds=-10))
    assert status == 0, said
    assert agreeing(world) == {"blue": 0, "green": 100}
