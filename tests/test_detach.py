"""The traffic stack's destroy-time hook of a target group (tools/hooks/detach.py): before Terraform deletes a colour's target
group, it takes the group out of the application's public rule, under the traffic lock, and refuses while the rule
gives it weight. Against moto (the shared load balancer as the traffic stack makes it), the real command in-process."""

from __future__ import annotations

import io
import json
from contextlib import ExitStack

import pytest

from model.routes import DETACH_ENV, weights_parameter
from tests.support.emulated_aws import PROJECT, REGION, Emulated, FakeClock
from tools.clock import SystemClock
from tools.hooks import detach
from tools.hooks.hook_input import hook_input as read_hook_input
from tools.live_routes import read_routes
from tools.traffic_lock import TrafficLock

APPS = {"sample-app": "app", "shop": "shop"}


@pytest.fixture
def traffic(emulated: Emulated) -> Emulated:
    """blue retired (weight 0, still in every rule), green serving; every rule keeps clients on a colour 10 minutes."""
    emulated.deploy_traffic(APPS, {"blue": 0, "green": 100})
    for route in read_routes(emulated.elbv2, PROJECT).public.values():
        forward = {
            "TargetGroups": [{"TargetGroupArn": arn, "Weight": route.weights[c]} for c, arn in route.target_groups.items()],
            "TargetGroupStickinessConfig": {"Enabled": True, "DurationSeconds": 600},
        }
        emulated.elbv2.modify_rule(RuleArn=route.rule_arn, Actions=[{"Type": "forward", "ForwardConfig": forward}])
    return emulated


def hook_input(aws: Emulated, application: str, colour: str) -> str:
    arn = read_routes(aws.elbv2, PROJECT).target_groups[(application, colour)]
    given = {"project": PROJECT, "region": REGION, "application": application, "colour": colour, "target_group_arn": arn}
    return json.dumps(given)


def run(aws: Emulated, given: str) -> tuple[int, str]:
    out = io.StringIO()
    status = detach.main({DETACH_ENV: given}, out=out)
    return status, out.getvalue()


def test_a_group_without_weight_leaves_its_rule_and_nothing_else_changes(traffic: Emulated) -> None:
    status, said = run(traffic, hook_input(traffic, "shop", "blue"))
    assert status == 0
    assert said.splitlines()[-1] == "detach: blue's target group of shop: taken out of shop's public rule (it had no weight)"
    routes = read_routes(traffic.elbv2, PROJECT)
    assert routes.public["shop"].weights == {"green": 100}
    assert routes.public["shop"].stickiness == {"Enabled": True, "DurationSeconds": 600}  # kept as it was
    assert routes.public["sample-app"].weights == {"blue": 0, "green": 100}  # another application's rule: untouched
    assert TrafficLock(traffic.ssm, traffic.sts, PROJECT, "", FakeClock()).holder() is None  # released
    # Again (Terraform re-runs a hook that failed later): nothing to do, said so.
    assert run(traffic, hook_input(traffic, "shop", "blue")) == (
        0,
        "detach: blue's target group of shop: no public rule forwards to it\n",
    )


def test_the_colours_last_group_out_of_every_rule_takes_it_out_of_the_live_weights(traffic: Emulated) -> None:
    """blue retired, removed from the configuration: once no rule forwards to it, the live weights forget it too (the
    shift reads only configured colours anyway; nothing keeps a colour that is gone)."""
    assert run(traffic, hook_input(traffic, "shop", "blue"))[0] == 0
    assert traffic.live_weights() == {"blue": 0, "green": 100}
    status, said = run(traffic, hook_input(traffic, "sample-app", "blue"))
    assert status == 0
    assert said.splitlines()[-1] == (
        "detach: blue's target group of sample-app: taken out of sample-app's public rule (it had no weight); blue "
        "(weight 0, in no rule) taken out of the live weights"
    )
    # Written per application (schema 2), blue gone from every application's split too.
    assert (traffic.live_weights(), traffic.live().schema) == ({"green": 100}, 2)
    assert all("blue" not in split for split in traffic.live().applications.values())


def test_a_group_that_carries_traffic_stops_the_deploy_before_it_is_deleted(
    traffic: Emulated, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _ = run(traffic, hook_input(traffic, "shop", "green"))
    assert status == 2
    assert capsys.readouterr().err.startswith(
        "detach refused: green still has weight 100 in shop's public rule, so its target group cannot go: shift its "
        "traffic away first"
    )
    assert read_routes(traffic.elbv2, PROJECT).public["shop"].weights == {"blue": 0, "green": 100}


def test_a_held_traffic_lock_stops_the_deploy_and_names_the_holder(traffic: Emulated, capsys: pytest.CaptureFixture[str]) -> None:
    lock = TrafficLock(traffic.ssm, traffic.sts, PROJECT, "python -m tools.shift --to green", SystemClock())
    with lock.held():
        assert run(traffic, hook_input(traffic, "shop", "blue"))[0] == 2
    err = capsys.readouterr().err
    assert "the traffic of eks-bg is locked by " in err
    assert "blue's target group of shop stays, and the deploy stopped before deleting it" in err
    assert read_routes(traffic.elbv2, PROJECT).public["shop"].weights == {"blue": 0, "green": 100}


def test_without_a_load_balancer_there_is_nothing_to_detach(emulated: Emulated) -> None:
    given = {"project": PROJECT, "region": REGION, "application": "shop", "colour": "blue", "target_group_arn": "arn:x"}
    assert run(emulated, json.dumps(given)) == (0, "detach: blue's target group of shop: no public rule forwards to it\n")


@pytest.mark.parametrize("given", ["not json", json.dumps({"project": PROJECT})])
def test_an_unusable_input_changes_nothing_and_says_what_is_missing(
    traffic: Emulated, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    assert run(traffic, given)[0] == 2
    assert capsys.readouterr().err.startswith(f"detach: refused: {DETACH_ENV} ")
    assert traffic.ssm.get_parameter(Name=weights_parameter(PROJECT))["Parameter"]["Value"] == '{"blue": 0, "green": 100}'


def test_the_detaches_of_one_deploy_wait_for_each_other(traffic: Emulated) -> None:
    """Terraform destroys the hook's instances (one per colour, and other applications') in parallel: a detach that
    meets another detach's lock waits for it, instead of stopping the deploy."""
    clock = FakeClock()
    other = TrafficLock(traffic.ssm, traffic.sts, PROJECT, f"{detach.DETACH_WHAT}blue's target group of sample-app", clock)
    with ExitStack() as held:
        held.enter_context(other.held())
        clock.on_sleep.append(lambda before, now: held.close() if clock.slept >= 3 else None)
        given = read_hook_input(detach.DetachInput, hook_input(traffic, "shop", "blue"), variable=DETACH_ENV)
        done = detach.detach(given, elbv2=traffic.elbv2, ssm=traffic.ssm, sts=traffic.sts, clock=clock, out=io.StringIO())
    assert done == "blue's target group of shop: taken out of shop's public rule (it had no weight)"
    assert clock.slept == 3
    assert read_routes(traffic.elbv2, PROJECT).public["shop"].weights == {"green": 100}


def test_a_detach_waits_for_another_detach_only_so_long(traffic: Emulated) -> None:
    clock = FakeClock()
    # Held in real time: its lease outlasts the wait (the waiting detach's clock is three hours behind).
    what = f"{detach.DETACH_WHAT}blue's target group of sample-app"
    other = TrafficLock(traffic.ssm, traffic.sts, PROJECT, what, SystemClock())
    given = read_hook_input(detach.DetachInput, hook_input(traffic, "shop", "blue"), variable=DETACH_ENV)
    with other.held(), pytest.raises(detach.StillServingError, match=r"locked by .* stays, and the deploy stopped"):
        detach.detach(given, elbv2=traffic.elbv2, ssm=traffic.ssm, sts=traffic.sts, clock=clock, out=io.StringIO())
    assert clock.slept == detach.DETACH_WAIT_SECONDS


def test_a_group_its_rule_no_longer_names_needs_no_lock(traffic: Emulated) -> None:
    """The whole application goes (its public rule first), the colour keeping its weight: nothing to write, so a held
    lock (a shift's) does not stop the deploy."""
    route = read_routes(traffic.elbv2, PROJECT).public["shop"]
    green = route.target_groups["green"]
    traffic.elbv2.modify_rule(
        RuleArn=route.rule_arn,
        Actions=[{"Type": "forward", "ForwardConfig": {"TargetGroups": [{"TargetGroupArn": route.target_groups["blue"]}]}}],
    )
    given = json.dumps(
        {"project": PROJECT, "region": REGION, "application": "shop", "colour": "green", "target_group_arn": green}
    )
    with TrafficLock(traffic.ssm, traffic.sts, PROJECT, "python -m tools.shift --to green", FakeClock()).held():
        assert run(traffic, given) == (0, "detach: green's target group of shop: no public rule forwards to it\n")
