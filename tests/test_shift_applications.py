"""Each application on its own (`--application`, `--independent`), on the emulated world of tests/test_shift.py and
tests/test_shift_analysis.py (moto in-process, the fake clock, orders' team alarm): an independent shift in which one
application breaches rolls that one back alone and brings the others to the end; a named application's shift leaves
every other application's rule and split untouched; the drain stays one change for everything (or for the named
applications); the weights parameter of schema 1 is rewritten per application by the first shift under the lock,
--status telling it before and after; an older release's `python -m tools.shift` refuses the new value with a message
(it is run from that release's own files, in its own process, against a moto server)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from model.revisions import files_at
from model.routes import lock_path, weights_parameter
from scripts.emulator import MotoProcess, client
from tests import test_shift, test_shift_analysis, test_shift_field
from tests.support.alarm_history import alarm_state
from tests.support.configs import write_project
from tests.support.emulated_aws import PROJECT, REGION, Emulated
from tests.test_shift import APPS, all_at, clients_of, config_of
from tests.test_shift_analysis import ALARM, ORDERS_ALARM, ShiftIn, when, with_analysis
from tools.live_routes import read_routes
from tools.live_weights import LiveWeights
from tools.shift import PartlyDoneError, ShiftError
from tools.shift.command import main

# Whole shifts against moto in this process: the emulated tier (pyproject.toml's markers), beside the unit tier.
pytestmark = pytest.mark.emulated

# The world of tests/test_shift_analysis.py (orders' alarm), by the names pytest finds its fixtures.
deployed, preview, green_runs, green_ready, shift_in = (
    test_shift_analysis.deployed,
    test_shift_analysis.preview,
    test_shift.green_runs,
    test_shift.green_ready,
    test_shift_analysis.shift_in,
)
server = test_shift_field.server  # an emulator server of this module's own, for the older release's process
# The last release whose `python -m tools.shift` reads the live weights by colour only (a clone has it).
PER_COLOUR_RELEASE = "8f0ce37"
BREACH = f"alarms name {ALARM}: {ALARM} in ALARM during the window (never ALARM)"


@pytest.fixture
def rule_writes(deployed: Emulated) -> Iterator[list[str]]:
    """Each ModifyRule the emulator is sent during the test, as the application whose public rule it writes (botocore's
    own hook: whatever calls it)."""
    rules = {route.rule_arn: app for app, route in read_routes(deployed.elbv2, PROJECT).public.items()}
    written: list[str] = []

    def seen(params: dict[str, Any], **_: Any) -> None:
        written.append(rules[params["RuleArn"]])

    event = "before-parameter-build.elastic-load-balancing-v2.ModifyRule"
    deployed.elbv2.meta.events.register(event, seen)
    yield written
    deployed.elbv2.meta.events.unregister(event, seen)


@pytest.fixture
def parameter_writes(deployed: Emulated) -> Iterator[list[int]]:
    """For each write of the weights parameter during the test, how many traffic lock parameters were held then."""
    held: list[int] = []

    def seen(params: dict[str, Any], **_: Any) -> None:
        if params["Name"] == weights_parameter(PROJECT):
            held.append(len(deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"]))

    event = "before-parameter-build.ssm.PutParameter"
    deployed.ssm.meta.events.register(event, seen)
    yield held
    deployed.ssm.meta.events.unregister(event, seen)


def test_an_independent_shift_rolls_the_breaching_application_back_alone_and_the_others_reach_the_end(
    shift_in: ShiftIn, deployed: Emulated
) -> None:
    shift, world, out = shift_in(deployed, step=50, applications=with_analysis(orders=ORDERS_ALARM))
    shift.independent = True
    half = lambda: deployed.forwarded()["orders"].get("green") == 50  # noqa: E731
    when(world, half, lambda: alarm_state(deployed.cloudwatch, ALARM, "ALARM"))
    with pytest.raises(PartlyDoneError) as partly:
        shift.run("green")
    back = {"blue": 100, "green": 0}
    expected = {**all_at({"blue": 0, "green": 100}), "orders": back}
    assert deployed.forwarded() == expected
    assert deployed.live().applications == expected  # the parameter says each application's own split
    assert deployed.live_weights() == {"blue": 100, "green": 100}  # what the guards read: both colours serve
    assert partly.value.outcomes == {
        "sample-app": "done",
        "catalogue": "done",
        "orders": f"rolled back to blue 100  green 0 at step 1/2 ({BREACH})",
    }
    assert str(partly.value) == f"done: blue 0  green 100; orders: rolled back to blue 100  green 0 at step 1/2 ({BREACH})"
    lines = out.getvalue().splitlines()
    assert f"rolling back orders alone to blue 100  green 0: step 1/2  blue 50  green 50: orders: {BREACH}" in lines
    # Step 2 moves and judges the two that went on, not orders.
    assert "step 2/2  blue 0  green 100  | in effect (2 rule change(s)); watching green" in lines
    second = lines.index("step 2/2  blue 0  green 100  | in effect (2 rule change(s)); watching green")
    assert not [line for line in lines[second:] if line.startswith("    orders:")]
    assert deployed.ssm.get_parameters_by_path(Path=lock_path(PROJECT))["Parameters"] == []


def test_without_independent_the_same_breach_puts_every_application_back(shift_in: ShiftIn, deployed: Emulated) -> None:
    """The default: one application's breach stops the shift for every moving one (tests/test_shift_analysis.py has
    its words)."""
    shift, world, _ = shift_in(deployed, step=50, applications=with_analysis(orders=ORDERS_ALARM))
    half = lambda: deployed.forwarded()["orders"].get("green") == 50  # noqa: E731
    when(world, half, lambda: alarm_state(deployed.cloudwatch, ALARM, "ALARM"))
    with pytest.raises(ShiftError) as failure:
        shift.run("green")
    assert not isinstance(failure.value, PartlyDoneError)
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})


def test_a_named_application_moves_alone_and_the_others_stay_untouched(
    shift_in: ShiftIn, deployed: Emulated, rule_writes: list[str]
) -> None:
    shift, _, out = shift_in(deployed, step=50)
    shift.applications = ["orders"]
    shift.run("green")
    assert rule_writes == ["orders", "orders"]  # its two steps; no other application's rule is sent anything
    expected = {**all_at({"blue": 100, "green": 0}), "orders": {"blue": 0, "green": 100}}
    assert deployed.forwarded() == expected
    assert deployed.live().applications == expected
    assert out.getvalue().splitlines()[-1] == "done: blue 0  green 100"
    assert "shifting to green: blue 100  green 0 -> blue 0  green 100 of orders in 2 step(s); " in out.getvalue()


def test_the_drain_moves_everything_in_one_change_or_only_the_named_applications(
    tmp_path: Path, deployed: Emulated, capsys: pytest.CaptureFixture[str], rule_writes: list[str], parameter_writes: list[int]
) -> None:
    path = write_project(tmp_path, config_of())
    aws = clients_of(deployed, None)
    written = rule_writes
    assert main(["--to", "green", "--now", "--application", "orders", "--config", str(path)], aws=aws) == 0
    assert written == ["orders"]
    assert deployed.forwarded() == {**all_at({"blue": 100, "green": 0}), "orders": {"blue": 0, "green": 100}}
    said = capsys.readouterr().out
    assert "all traffic to green for orders (the other applications stay as they are) in one change" in said
    # The applications differ now; a drain without --application takes every one to blue in one change.
    written.clear()
    puts: list[str] = []
    deployed.ssm.meta.events.register("before-parameter-build.ssm.PutParameter", lambda params, **_: puts.append(params["Name"]))
    assert main(["--to", "blue", "--now", "--config", str(path)], aws=aws) == 0
    assert sorted(written) == sorted(APPS)  # one ModifyRule each
    assert puts.count(weights_parameter(PROJECT)) == 1
    assert deployed.forwarded() == all_at({"blue": 100, "green": 0})
    assert deployed.live().applications == all_at({"blue": 100, "green": 0})


def test_the_first_shift_rewrites_a_per_colour_parameter_per_application_under_the_lock(
    shift_in: ShiftIn, deployed: Emulated, capsys: pytest.CaptureFixture[str], tmp_path: Path, parameter_writes: list[int]
) -> None:
    """A traffic stack deployed by a release before per-application weights holds `{"blue": 100, "green": 0}`."""
    name = weights_parameter(PROJECT)
    deployed.ssm.put_parameter(Name=name, Value='{"blue": 100, "green": 0}', Overwrite=True, Type="String")
    path = write_project(tmp_path, config_of())
    assert main(["--status", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    before = capsys.readouterr().out.splitlines()
    assert before[1] == (
        f"  live weights ({name}, schema 1: by colour, every application at them; the next shift or drain writes them "
        "per application): blue 100  green 0"
    )
    assert "  orders: blue 100  green 0 (its rule forwards it)" in before
    shift, _, out = shift_in(deployed, step=100)
    shift.applications = ["catalogue"]
    parameter_writes.clear()  # the test's own write of the older value
    shift.run("green")
    assert parameter_writes == [1]  # the step's write, the traffic lock held
    assert (
        "the weights parameter holds schema 1: by colour, every application at them; the next shift or drain writes them "
        "per application: this shift's first write, under the traffic lock"
    ) in out.getvalue()
    value = json.loads(deployed.ssm.get_parameter(Name=name)["Parameter"]["Value"])
    assert next(iter(value)) == "_schema"  # first: what an older reader shows its operator
    assert value == {
        "_schema": 2,
        "blue": 100,
        "by_application": {**all_at({"blue": 100, "green": 0}), "catalogue": {"blue": 0, "green": 100}},
        "green": 100,
    }
    assert main(["--status", "--config", str(path)], aws=clients_of(deployed, None)) == 0
    after = capsys.readouterr().out.splitlines()
    assert after[1] == f"  live weights ({name}), by colour (the most any application gives it): blue 100  green 100"
    assert "  catalogue: blue 0  green 100 (its rule forwards it)" in after
    assert "  orders: blue 100  green 0 (its rule forwards it)" in after


@pytest.fixture(scope="module")
def per_colour_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files of the last release that reads the live weights by colour, as its checkout has them."""
    root = tmp_path_factory.mktemp("per-colour-release")
    # Its code, the registry it loads, and the applications' policies the test's configuration names.
    for folder in ("tools", "model", "policies", "argocd", "tests/fixtures/applications"):
        # Copied, not linked: its model/paths.py finds the project from its own file's resolved place.
        shutil.copytree(files_at(PER_COLOUR_RELEASE, folder, key="the per-colour release"), root / folder)
    return root


def test_an_older_release_refuses_the_per_application_value_and_shows_it(
    server: MotoProcess, per_colour_release: Path, tmp_path: Path
) -> None:
    """Its `--status`, run as its operator would, against a parameter this release wrote: refused (exit 2), the value
    shown from its start, `"_schema": 2` first; nothing of it is read as weights."""
    # The value as this release writes it: orders moved to green alone.
    value = LiveWeights().updated({**all_at({"blue": 100, "green": 0}), "orders": {"blue": 0, "green": 100}}).value()
    env = {
        **{k: v for k, v in os.environ.items() if k != "AWS_PROFILE"},
        "AWS_ENDPOINT_URL": server.endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }
    client("ssm", server.endpoint, REGION).put_parameter(
        Name=weights_parameter(PROJECT), Value=value, Type="String", Overwrite=True
    )
    path = write_project(tmp_path, config_of())
    done = subprocess.run(
        [sys.executable, "-m", "tools.shift", "--status", "--config", str(path)],
        cwd=per_colour_release,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    told = done.stdout
    assert f'  live weights: {weights_parameter(PROJECT)} holds \'{{"_schema": 2, "blue": 100, ' in told
    assert "not a JSON object of weights by colour" in told
