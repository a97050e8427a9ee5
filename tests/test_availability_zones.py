"""The network's availability zones, planned for real by Terraform against the AWS emulator
(tests/support/emulator_plans.py): each subnet pair gets a zone of its own, or the plan fails naming the key."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from tests.support.emulator_plans import EMULATED_ZONES, EmulatorPlans

# Terraform runs in the background from the session's start (tests/support/background_checks.py).
pytestmark = [pytest.mark.background("emulator_plans")]


@pytest.fixture(scope="module")
def plans(emulator_plans: Future[EmulatorPlans]) -> EmulatorPlans:
    return emulator_plans.result()


@pytest.fixture(scope="module")
def failure(plans: EmulatorPlans) -> str:
    status, output = plans.failed
    assert status != 0, output
    return " ".join(output.split())  # Terraform wraps long messages


def test_each_subnet_pair_gets_a_zone_of_its_own(plans: EmulatorPlans) -> None:
    assert sorted(plans.zones["default"]) == sorted(EMULATED_ZONES * 2)  # one public and one private subnet each


def test_excluded_zone_ids_are_never_used(plans: EmulatorPlans) -> None:
    assert sorted(plans.zones["excluded"]) == ["ap-northeast-1c", "ap-northeast-1c", "ap-northeast-1d", "ap-northeast-1d"]


def test_more_zones_than_the_region_offers_fail_the_plan_naming_the_key_and_the_zones(failure: str) -> None:
    assert (
        "network.az_count is 4, but ap-northeast-1 offers 3 usable availability zone(s): "
        "ap-northeast-1a, ap-northeast-1c, ap-northeast-1d"
    ) in failure
    assert "Set network.az_count to at most 3" in failure


def test_zones_left_out_count_against_az_count(failure: str) -> None:
    assert (
        "network.az_count is 3, but ap-northeast-1 offers 2 usable availability zone(s): ap-northeast-1c, ap-northeast-1d"
        in failure
    )
    assert "network.excluded_zone_ids leaves out apne1-az4" in failure
