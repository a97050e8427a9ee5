"""The commands README gives, through the pinned cdktf CLI, as a user runs them: by hand after `source scripts/env.sh`,
in a scratch copy of the project (tests/support/by_hand.py). The example's `cdktf synth` and `cdktf diff common` of
what it wrote are a background check (tests/support/background_checks.py); the others, one CLI process per case, run on
the main thread meanwhile."""

from __future__ import annotations

import json
import re
from concurrent.futures import Future
from pathlib import Path

import pytest

from model.loading import load_config
from model.paths import PROJECT_DIR
from tests.support.by_hand import ByHand, CliByHand, by_hand, example_config_text, scratch_project
from tests.support.synth import synthesize

pytestmark = pytest.mark.background("cli")
SPINNER = re.compile("[\u2800-\u28ff]")  # the CLI's spinner frames are braille characters


@pytest.fixture(scope="module")
def by_hand_run(cli: Future[CliByHand]) -> CliByHand:
    return cli.result(timeout=600)


def test_cdktf_synth_by_hand_writes_every_stack_and_prints_each_warning_once_no_error_and_no_spinner(
    by_hand_run: CliByHand,
) -> None:
    """The Makefile's environment by one line: no `[ERROR]` (jsii's deprecation notices, HashiCorp's checkpoint call,
    a missing Terraform CLI config), no spinner frames in a log, the stacks written and the earlier one gone.
    Warnings (the placeholder Git URL, the default image tag) print once each, as warnings, not as "[ERROR]"."""
    synth = by_hand_run.synth
    assert synth.returncode == 0, synth.output[-3000:]
    assert "Generated Terraform code for the stacks: blue, common, green, traffic" in synth.output
    assert "[ERROR]" not in synth.output, synth.output
    assert SPINNER.findall(synth.output) == [], synth.output
    assert synth.output.count("warning: gitops.repo_url is the placeholder") == 1, synth.output
    assert synth.stacks == ["blue", "common", "green", "traffic"]
    # The pinned Node runs the CLI and the jsii runtime: no end-of-life banner.
    assert "end-of-life" not in synth.output
    assert by_hand_run.node.output.startswith(("v22.", "v24.")), by_hand_run.node.output


def test_cli_synth_equals_the_in_process_synth(by_hand_run: CliByHand) -> None:
    """What `cdktf synth` wrote through cdktf.json's app command is what the tests examine (synthesized beside it,
    at the same depth: state paths are relative to each stack's directory), and what the rehearsal deploys."""
    in_process = synthesize(load_config(by_hand_run.project / "cdktf.json"), by_hand_run.project / "in-process")
    for stack in ("common", "blue", "green"):
        written = by_hand_run.project / "cdktf.out" / "stacks" / stack / "cdk.tf.json"
        assert json.loads(written.read_text()) == in_process.json(stack), stack


def test_cli_output_holds_no_absolute_path_of_the_project(by_hand_run: CliByHand) -> None:
    """cdktf.out made here applies from another checkout: no chart or state path of this one in it."""
    out = by_hand_run.project / "cdktf.out"
    texts = {p: p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file() and "assets" not in p.parts}
    assert len(texts) >= 4
    for place in (str(by_hand_run.project), str(PROJECT_DIR)):
        assert [str(p.relative_to(out)) for p, text in texts.items() if place in text] == [], place


# --- `source scripts/env.sh`, then the CLI by hand: what README tells an operator to run ---------------------------


def synth_by_hand(tmp_path: Path, config_text: str) -> ByHand:
    return by_hand(scratch_project(tmp_path, config_text), "cdktf synth")


def test_cdktf_synth_by_hand_names_a_json_mistake_once_by_file_line_and_column(tmp_path: Path) -> None:
    """The config is the app's own file (cdktf.json names it; the CLI never parses it): a JSON mistake there is the
    app's to report, once, with no Node stack trace, and the earlier synth is removed."""
    text = example_config_text().replace('"region": "ap-northeast-1",', '"region": "ap-northeast-1"', 1)
    line = text.splitlines().index('  "dns": {') + 1  # Python's JSON parser stops at the next key
    run = synth_by_hand(tmp_path, text)
    assert run.returncode != 0, run.output
    message = f"config.json: not valid JSON: line {line} column 3: Expecting ',' delimiter"
    assert run.output.count(message) == 1, run.output
    assert run.output.count("invalid configuration in config.json") == 1, run.output
    for trace in ("Traceback", "SyntaxError", "    at ", "JSON.parse"):
        assert trace not in run.output, run.output
    # At most the CLI's own line after an app that synthesized nothing ("... manifest.json was not created"): main.py.
    assert run.output.count("[ERROR]") <= 1, run.output
    assert len(SPINNER.findall(run.output)) <= 1, run.output  # the last frame, printed once on exit
    assert run.stacks == []


def test_cdktf_diff_common_by_hand_initialises_offline_and_plans_without_an_error_line(by_hand_run: CliByHand) -> None:
    """`cdktf diff common` by hand (README's review step; deploy and destroy initialise the same way): Terraform takes
    the providers from the machine's mirror, and the CLI does not ask the public registry to lock them (it would fail
    offline: "Could not retrieve providers for locking", `terraform init failed`). Against the emulator, in a zone
    of its own, of what the by-hand `cdktf synth` wrote (`--skip-synth`: the synth is that same CLI step; tests/support/
    by_hand.py, a background check started with the session)."""
    run = by_hand_run.diff
    assert run.returncode == 0, run.output[-3000:]
    assert "Terraform has been successfully initialized" in run.output
    assert "Plan:" in run.output
    assert "[ERROR]" not in run.output, run.output[-3000:]
    assert "Could not retrieve providers for locking" not in run.output
