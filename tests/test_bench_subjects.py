"""`make bench` times configurations of its own (bench/run.py); each must be one synth accepts, or the bench measures
an error message; its shift poll judges what it says it judges, in the calls its budget allows. No timing here: the
budgets are the bench's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.run import APPLICATIONS, BUDGETS, OPERATOR_COMMANDS, SHIFT_POLL_CALLS, colours, first_run, many_applications
from bench.shift_poll import PROVIDERS, analysis, measure
from model.paths import PROJECT_DIR
from scripts.env import environment
from tests.support.configs import example_raw, validated
from tools.commands import COMMANDS
from tools.shift.judged import providers


def test_the_catalogue_subject_is_a_valid_configuration_of_that_many_applications_in_every_colour() -> None:
    config = validated({**example_raw(), **many_applications(APPLICATIONS)})
    assert len(config.applications) == APPLICATIONS
    assert len({app.namespace for app in config.applications.values()}) == APPLICATIONS
    for colour in config.clusters.values():
        assert set(colour.applications) == set(config.applications)


def test_the_colour_subjects_are_valid_configurations_with_one_serving_colour() -> None:
    for count in (2, 4, 8):
        config = validated({**example_raw(), **colours(count)})
        assert [c.weight for c in config.clusters.values()].count(100) == 1
        assert len(config.clusters) == count


def test_every_subject_runs_as_a_first_run_even_under_makes_bytecode_cache(tmp_path: Path) -> None:
    """make's environment keeps bytecode (scripts/env.py); a bench subject neither reads nor writes any, run after run."""
    (tmp_path / "probe.py").write_text("ANSWER = 42\n")
    under_make = {**os.environ, **environment(dict(os.environ), terminal=False), "PYTHONPYCACHEPREFIX": str(tmp_path / "cache")}
    for _ in range(2):
        env = first_run(under_make)
        subprocess.run([sys.executable, "-c", "import probe"], cwd=tmp_path, env=env, check=True, timeout=60)
    assert not (tmp_path / "cache").exists()
    assert not (tmp_path / "__pycache__").exists()


def test_the_commands_subject_loads_every_command_the_list_names() -> None:
    """The bench times the start of what tools/commands.py lists, not a hand-kept few: each command's main() module is
    in the interpreter once the subject's code has run."""
    probe = f"import sys\n{OPERATOR_COMMANDS}\nprint(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_DIR, capture_output=True, text=True, check=True, timeout=60
    )
    assert sorted({c.entry for c in COMMANDS} - set(loaded.stdout.split())) == []


def test_contributing_says_what_each_budget_is_and_no_other() -> None:
    """docs/contributing.md's table of budgets names each one as the bench prints it, with its limit."""
    text = (PROJECT_DIR / "docs" / "contributing.md").read_text()
    rows = dict(re.findall(r"^\| `([^`]+)` \| (\d+\.\d+) \|", text[text.index("## Running the bench") :], flags=re.M))
    assert {name: float(limit) for name, limit in rows.items()} == BUDGETS


def test_each_application_of_the_shift_poll_has_the_providers_it_reports() -> None:
    analyses = [analysis(number, "http://127.0.0.1:9090") for number in range(APPLICATIONS)]
    kinds = [sorted(item.split(" ")[0] for item in providers(mine)) for mine in analyses]
    assert kinds == [sorted(["metric_math", "prometheus", "synthetic"])] * APPLICATIONS
    assert len(PROVIDERS) == 3
    # Each application's own queries: twenty copies of one would judge one series twenty times.
    assert len({(mine.metric_math[0].expression, mine.prometheus[0].query) for mine in analyses}) == APPLICATIONS


@pytest.mark.background
def test_the_shift_poll_s_calls_are_within_its_budget_against_the_emulator() -> None:
    """The count the budget holds, measured as `make bench` measures it (make test runs no bench): one GetMetricData
    for the gate and one for the metric math of every application, and each HTTP provider's request."""
    report = measure(APPLICATIONS, polls=1)
    assert report.calls == {"GetMetricData": 2}
    assert report.aws_calls <= BUDGETS[SHIFT_POLL_CALLS]
    assert report.http_requests == 2 * APPLICATIONS
    assert report.breaching == 0  # the poll timed is a passing one, not an error's path
