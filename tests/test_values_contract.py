"""The facts Terraform hands the charts carry their contract's version, and the charts refuse another: a chart of
an older revision must fail to render, not misread a renamed fact as its default (a serving colour's weight as 0).

argocd/apps reads the facts themselves (`contractVersion`); an application's chart reads its part of them, `blueGreen`
(`blueGreen.contractVersion`). The sample app's chart is the project's one application chart."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helm_python import HelmRenderError

from model.config import BLUE_GREEN
from model.values import CONTRACT_VERSION
from tests.support.charts import CHARTS, Chain, build_chain, render
from tests.support.configs import EXAMPLE_COLOURS, SAMPLE_APP
from tests.support.synth import Synthesized

WRITTEN = re.compile(r"\{\{- \$written := (\d+) -\}\}")
SAMPLE_APP_CHART = "applications/sample-app/chart"  # under argocd/
# How each chart names itself when it refuses facts.
REFUSER = {"apps": "argocd/apps", SAMPLE_APP_CHART: "the sample-app chart"}


@pytest.fixture(scope="module")
def chain(example_app: Synthesized) -> Chain:
    return build_chain(example_app, EXAMPLE_COLOURS[0])


def apps_facts(chain: Chain) -> dict[str, Any]:
    facts: dict[str, Any] = chain.parent["spec"]["source"]["helm"]["valuesObject"]
    return facts


def sample_app_facts(chain: Chain) -> dict[str, Any]:
    values: dict[str, Any] = chain.children[SAMPLE_APP]["spec"]["source"]["helm"]["valuesObject"]
    return values


def without_contract(chart: str, facts: dict[str, Any]) -> dict[str, Any]:
    """What a Terraform of the project from before the contract would hand over."""
    if chart == "apps":
        return {key: value for key, value in facts.items() if key != "contractVersion"}
    blue_green = {key: value for key, value in facts[BLUE_GREEN].items() if key != "contractVersion"}
    return {**facts, BLUE_GREEN: blue_green}


FACTS: list[Any] = [
    pytest.param("apps", apps_facts, id="apps"),
    pytest.param(SAMPLE_APP_CHART, sample_app_facts, id="sample-app"),
]


def chart_of_contract(chart: str, version: int, into: Path) -> Path:
    """A copy of one of this project's charts as it would be at a revision written for another contract."""
    copy = into / Path(chart).name
    shutil.copytree(CHARTS / chart, copy)
    helper = copy / "templates" / "_contract.tpl"
    helper.write_text(WRITTEN.sub(f"{{{{- $written := {version} -}}}}", helper.read_text(), count=1))
    return copy


@pytest.mark.parametrize("chart", [p.values[0] for p in FACTS])
def test_each_chart_is_written_for_the_contract_terraform_hands_it(chart: str) -> None:
    (written,) = WRITTEN.findall((CHARTS / chart / "templates" / "_contract.tpl").read_text())
    assert int(written) == CONTRACT_VERSION


def test_each_application_is_handed_the_contract_version(chain: Chain) -> None:
    """Every application's child passes its chart the version in `blueGreen`, whichever repository the chart is in."""
    for name, app in chain.root_values["applications"].items():
        assert app["values"][BLUE_GREEN]["contractVersion"] == CONTRACT_VERSION == chain.root_values["contractVersion"], name


@pytest.mark.parametrize(("chart", "facts"), FACTS)
def test_todays_facts_render(chain: Chain, chart: str, facts: Callable[[Chain], dict[str, Any]]) -> None:
    """What the refusals below are measured against: the same facts, the chart as committed."""
    assert render(chart, facts(chain), release=Path(chart).name, namespace="argocd")


@pytest.mark.parametrize(("chart", "facts"), FACTS)
def test_a_chart_of_the_previous_contract_refuses_todays_facts_naming_both(
    chain: Chain, tmp_path: Path, chart: str, facts: Callable[[Chain], dict[str, Any]]
) -> None:
    previous = chart_of_contract(chart, CONTRACT_VERSION - 1, tmp_path)
    refusal = f"{REFUSER[chart]} was written for values contract {CONTRACT_VERSION - 1}, but Terraform handed it contract"
    with pytest.raises(HelmRenderError, match=rf"{refusal} {CONTRACT_VERSION}:"):
        render(previous, facts(chain), release=Path(chart).name, namespace="argocd")


@pytest.mark.parametrize(("chart", "facts"), FACTS)
def test_facts_without_a_contract_are_refused(chain: Chain, chart: str, facts: Callable[[Chain], dict[str, Any]]) -> None:
    refusal = f"{REFUSER[chart]} was written for values contract {CONTRACT_VERSION}, but Terraform handed it contract none"
    with pytest.raises(HelmRenderError, match=refusal):
        render(chart, without_contract(chart, facts(chain)), release=Path(chart).name, namespace="argocd")
