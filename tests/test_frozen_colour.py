"""A colour runs only what its own entry and its own Git revision name: blue, pinned to a tag and serving,
synthesizes byte for byte the same when `main` moves on under argocd/ (Argo CD's values, the App of Apps'
template, the sample app's chart, a new application's chart) and the project's defaults move with it (a platform
chart's default version, the sample app's default image tag).

A real Git repository (a copy of the project's tracked files), synthesized out of process before and after the move
(tests/support/frozen_colour.py, a background check started with the session); green, following `main` and inheriting
the defaults, must change, so the comparison can fail. (Terraform reads no chart of the checkout but
bootstrap/manifests, which reaches every colour by design and is not moved here: a change there makes blue differ too.
What argocd/ holds reaches a colour from Git, at its revision, through Argo CD.)
"""

from __future__ import annotations

import filecmp
import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from model.bootstrap import facts_in
from tests.support.configs import SAMPLE_APP

pytestmark = [pytest.mark.background("frozen_colour")]


def same_tree(left: Path, right: Path) -> bool:
    comparison = filecmp.dircmp(left, right)
    if comparison.left_only or comparison.right_only:
        return False
    _, mismatch, errors = filecmp.cmpfiles(left, right, comparison.common_files, shallow=False)
    return not mismatch and not errors and all(same_tree(left / d, right / d) for d in comparison.common_dirs)


@pytest.fixture(scope="module")
def synthesized(frozen_colour: Future[tuple[Path, Path]]) -> tuple[Path, Path]:
    return frozen_colour.result(timeout=900)


def test_a_colour_following_a_tag_is_byte_identical_when_main_moves(synthesized: tuple[Path, Path]) -> None:
    before, after = synthesized
    assert same_tree(before / "stacks" / "blue", after / "stacks" / "blue")


def test_a_colour_following_main_sees_the_move(synthesized: tuple[Path, Path]) -> None:
    before, after = synthesized
    assert not same_tree(before / "stacks" / "green", after / "stacks" / "green")


def test_what_green_sees_is_its_defaults_not_the_charts(synthesized: tuple[Path, Path]) -> None:
    """Terraform reads no chart of the checkout but bootstrap/manifests: green changes by the facts it is handed (the
    new default chart version and image tag), while argocd/ reaches it from Git."""
    before, after = synthesized

    def facts(out: Path) -> dict[str, Any]:
        stack = json.loads((out / "stacks" / "green" / "cdk.tf.json").read_text())
        (root,) = [r for r in stack["resource"]["helm_release"].values() if r["name"] == "app-of-apps"]
        found: dict[str, Any] = facts_in(json.loads(root["values"][0]))
        return found

    old, new = facts(before), facts(after)
    assert old["applications"][SAMPLE_APP]["values"]["blueGreen"]["image"]["tag"] == "0.1.0"
    assert new["applications"][SAMPLE_APP]["values"]["blueGreen"]["image"]["tag"] == "next1234"
    assert [name for name in old["platform"] if old["platform"][name] != new["platform"][name]] != []
