"""The facts Terraform hands the charts carry their contract's version, and the charts refuse another: a chart of
an older revision must fail to render, not misread a renamed fact as its default (a serving colour's weight as 0)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from helm_python import HelmRenderError

from model.values import CONTRACT_VERSION
from tests.support.charts import CHARTS, Chain, build_chain, render
from tests.support.configs import EXAMPLE_COLOURS
from tests.support.synth import Synthesized

WRITTEN = re.compile(r"\{\{- \$written := (\d+) -\}\}")


@pytest.fixture(scope="module")
def chain(example_app: Synthesized) -> Chain:
    return build_chain(example_app, EXAMPLE_COLOURS[0])


def apps_facts(chain: Chain) -> dict[str, Any]:
    facts: dict[str, Any] = chain.parent["spec"]["source"]["helm"]["valuesObject"]
    return facts


def sample_app_facts(chain: Chain) -> dict[str, Any]:
    values: dict[str, Any] = chain.children["sample-app"]["spec"]["source"]["helm"]["valuesObject"]
    return values


def chart_of_contract(chart: str, version: int, into: Path) -> Path:
    """A copy of one of this project's charts as it would be at a revision written for another contract."""
    copy = into / chart
    shutil.copytree(CHARTS / chart, copy)
    helper = copy / "templates" / "_contract.tpl"
    helper.write_text(WRITTEN.sub(f"{{{{- $written := {version} -}}}}", helper.read_text(), count=1))
    return copy


@pytest.mark.parametrize("chart", ["apps", "sample-app"])
def test_each_chart_is_written_for_the_contract_terraform_hands_it(chart: str) -> None:
    (written,) = WRITTEN.findall((CHARTS / chart / "templates" / "_contract.tpl").read_text())
    assert int(written) == CONTRACT_VERSION


@pytest.mark.parametrize(("chart", "facts"), [("apps", apps_facts), ("sample-app", sample_app_facts)])
def test_a_chart_of_the_previous_contract_refuses_todays_facts_naming_both(
    chain: Chain, tmp_path: Path, chart: str, facts: Any
) -> None:
    previous = chart_of_contract(chart, CONTRACT_VERSION - 1, tmp_path)
    refusal = f"argocd/{chart} was written for values contract {CONTRACT_VERSION - 1}, but Terraform handed it contract"
    with pytest.raises(HelmRenderError, match=rf"{refusal} {CONTRACT_VERSION}:"):
        render(previous, facts(chain), release=chart, namespace="argocd")


@pytest.mark.parametrize(("chart", "facts"), [("apps", apps_facts), ("sample-app", sample_app_facts)])
def test_facts_without_a_contract_are_refused(chain: Chain, chart: str, facts: Any) -> None:
    """What a Terraform of the project from before the contract hands over."""
    older = {key: value for key, value in facts(chain).items() if key != "contractVersion"}
    refusal = f"argocd/{chart} was written for values contract {CONTRACT_VERSION}, but Terraform handed it contract none"
    with pytest.raises(HelmRenderError, match=refusal):
        render(chart, older, release=chart, namespace="argocd")
