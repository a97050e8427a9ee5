"""The GitHub workflows (.github/workflows/) and their scripts (scripts/ci/): linted by actionlint and zizmor, the
roles and concurrency groups each job that plans or applies must have, which stacks a change deploys (the serving
colour frozen), and a shallow clone refused in one line; the jobs that operate a colour run where its API is reachable
and check that first, with sessions as long as their operations, and a fork's pull request is told why it has no
plan."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from model.config import COMMON_STACK, Config
from policies.pipeline import DEFAULT_DEPLOY_ENVIRONMENT, DEFAULT_TRAFFIC_ENVIRONMENT, MAX_SESSION_SECONDS, VARIABLES
from scripts.ci import stacks as ci_stacks
from scripts.ci.changed_stacks import (
    FETCH_HINT,
    Changes,
    base_ref_from_github,
    changed_stacks,
    fetched,
    missing_revisions,
    report,
)
from scripts.ci.credential_expiry import EXPIRY_VARIABLE, SOURCE_VARIABLE
from scripts.ci.reach_cluster import RUNNER_VARIABLE
from tests.support.git import git

WORKFLOWS = ("pull-request", "deploy", "shift", "retire")
# What a step runs -> the role its job must assume (GitHub repository variables, docs/ci.md).
ROLE_OF = {
    "scripts.ci.plan_stacks": "${{ vars.PLAN_ROLE_ARN }}",
    "scripts.ci.deploy_stacks": "${{ vars.DEPLOY_ROLE_ARN }}",
    "tools.shift": "${{ vars.TRAFFIC_ROLE_ARN }}",
    "tools.retire": "${{ vars.DEPLOY_ROLE_ARN }}",
}
CREDENTIALS_ACTION = "aws-actions/configure-aws-credentials"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{40}$")


def workflow(project_dir: Path, name: str) -> dict[str, Any]:
    # PyYAML reads the `on:` key as True (YAML 1.1): irrelevant here, only jobs are read.
    loaded: dict[str, Any] = yaml.safe_load((project_dir / ".github" / "workflows" / f"{name}.yml").read_text())
    return loaded


def job_problems(name: str, job: Mapping[str, Any]) -> list[str]:
    """What is wrong with one job: a plan or an apply with another role than its own, or without a concurrency group."""
    runs = " ".join(str(step.get("run", "")) for step in job.get("steps", []))
    acts = [module for module in ROLE_OF if f"-m {module}" in runs]
    roles = [
        step.get("with", {}).get("role-to-assume") for step in job.get("steps", []) if CREDENTIALS_ACTION in step.get("uses", "")
    ]
    problems = [f"{name}: runs {module} assuming {roles}, not {ROLE_OF[module]}" for module in acts if roles != [ROLE_OF[module]]]
    concurrency = job.get("concurrency") or {}
    if acts and not (concurrency.get("group") and concurrency.get("cancel-in-progress") is False):
        problems.append(f"{name}: runs {acts} without a concurrency group (cancel-in-progress: false)")
    return problems


def all_problems(workflows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [p for wf, body in workflows.items() for job, spec in body["jobs"].items() for p in job_problems(f"{wf}.{job}", spec)]


@pytest.fixture(scope="module")
def workflows(project_dir: Path) -> dict[str, dict[str, Any]]:
    return {name: workflow(project_dir, name) for name in WORKFLOWS}


def test_actionlint_finds_no_error(project_dir: Path) -> None:
    done = subprocess.run(["actionlint", "-no-color"], cwd=project_dir, capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_zizmor_finds_nothing_offline(project_dir: Path) -> None:
    done = subprocess.run(
        ["zizmor", "--offline", "--no-progress", "--format", "plain", ".github/workflows"],
        cwd=project_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout


def test_every_job_that_plans_or_applies_has_its_role_and_a_concurrency_group(workflows: dict[str, dict[str, Any]]) -> None:
    assert all_problems(workflows) == []
    acting = [f"{wf}.{job}" for wf, body in workflows.items() for job, spec in body["jobs"].items() if spec.get("concurrency")]
    assert sorted(acting) == [
        "deploy.colour",
        "deploy.common",
        "deploy.traffic",
        "pull-request.plan",
        "retire.retire",
        "shift.shift",
    ]


def test_fails_a_plan_with_the_deployer_role(workflows: dict[str, dict[str, Any]]) -> None:
    broken = copy.deepcopy(workflows)
    (credentials,) = [s for s in broken["pull-request"]["jobs"]["plan"]["steps"] if CREDENTIALS_ACTION in s.get("uses", "")]
    credentials["with"]["role-to-assume"] = "${{ vars.DEPLOY_ROLE_ARN }}"
    assert all_problems(broken) == [
        "pull-request.plan: runs scripts.ci.plan_stacks assuming ['${{ vars.DEPLOY_ROLE_ARN }}'], not ${{ vars.PLAN_ROLE_ARN }}"
    ]


def test_fails_an_apply_without_a_concurrency_group(workflows: dict[str, dict[str, Any]]) -> None:
    broken = copy.deepcopy(workflows)
    del broken["deploy"]["jobs"]["traffic"]["concurrency"]
    broken["shift"]["jobs"]["shift"]["concurrency"]["cancel-in-progress"] = True
    assert [p.split(":")[0] for p in all_problems(broken)] == ["deploy.traffic", "shift.shift"]


def test_deploys_share_one_group_per_stack_with_shift_and_retire(workflows: dict[str, dict[str, Any]]) -> None:
    """Two runs never apply one stack at once: a shift and a deploy of traffic, a retire and a deploy of a colour."""
    groups = {
        f"{wf}.{job}": spec["concurrency"]["group"]
        for wf, body in workflows.items()
        for job, spec in body["jobs"].items()
        if spec.get("concurrency")
    }
    # The gated shift queues with the traffic deploy; an emergency drain has a group of its own (it must be able to
    # interrupt a running shift, with break_lock; the traffic lock keeps the two exact).
    traffic = groups["deploy.traffic"].replace("needs.changes", "needs.project")
    assert groups["shift.shift"] == traffic + "${{ inputs.now && '-drain' || '' }}"
    assert (
        groups["deploy.colour"].replace("needs.changes", "needs.project").replace("matrix.colour", "inputs.colour")
        == groups["retire.retire"]
    )


def test_the_shift_workflow_refuses_a_dry_run_drain_and_passes_break_lock(workflows: dict[str, dict[str, Any]]) -> None:
    shift = workflows["shift"]
    first = shift["jobs"]["project"]["steps"][0]
    assert first["if"] == "${{ inputs.now && inputs.dry_run }}"
    assert "exit 1" in first["run"]
    trigger = next(value for key, value in shift.items() if key in ("on", True))  # YAML 1.1 reads a bare `on` as true
    assert trigger["workflow_dispatch"]["inputs"]["break_lock"]["default"] is False
    (command,) = [s for s in shift["jobs"]["shift"]["steps"] if "python -m tools.shift --to" in s.get("run", "")]
    assert command["env"]["BREAK_LOCK"] == "${{ inputs.break_lock }}"
    assert 'if [ "$BREAK_LOCK" = true ]; then flags+=(--break-lock); fi' in command["run"]


def test_the_shift_workflow_attaches_its_own_runs_report_after_a_roll_back_too(
    workflows: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    """After the shift, whatever it came to (a roll-back fails the step): the record of this run drawn, by the id the
    shift wrote (--id-file), never the newest run's (a drain started meanwhile), and the two files attached to the
    workflow run (docs/shift-record.md). The report step's own script is run by bash, `python` standing in: without
    an id (the shift refused before it started) it draws nothing and says so."""
    steps = workflows["shift"]["jobs"]["shift"]["steps"]
    shifted = next(n for n, s in enumerate(steps) if "python -m tools.shift --to" in s.get("run", ""))
    (drawn,) = [n for n, s in enumerate(steps) if "python -m tools.shift --report" in s.get("run", "")]
    (attached,) = [n for n, s in enumerate(steps) if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert shifted < drawn < attached
    for step in (steps[drawn], steps[attached]):
        assert step["if"].startswith("${{ always() && ")  # a failed shift's step does not skip them
    assert steps[attached]["with"]["path"] == "shift-report/"
    assert '--id-file "$RUNNER_TEMP/shift-id"' in steps[shifted]["run"]
    script = steps[drawn]["run"].replace("source scripts/env.sh", 'python() { printf "%s\\n" "$@"; }')

    def report(**env: str) -> str:
        return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True).stdout

    assert report(RUNNER_TEMP=str(tmp_path)) == "this run recorded no event (refused before it started): no report\n"
    (tmp_path / "shift-id").write_text("20261129T045600Z-1a2b3c4d\n")
    assert report(RUNNER_TEMP=str(tmp_path)).splitlines() == [
        "-m", "tools.shift", "--report", "20261129T045600Z-1a2b3c4d", "--out", "shift-report",
    ]  # fmt: skip


def test_actions_pinned_by_commit_checkout_keeps_no_credentials_and_no_expression_in_run(
    workflows: dict[str, dict[str, Any]],
) -> None:
    steps = [(f"{wf}.{job}", s) for wf, body in workflows.items() for job, spec in body["jobs"].items() for s in spec["steps"]]
    assert [(where, s["uses"]) for where, s in steps if "uses" in s and not PINNED.match(s["uses"])] == []
    checkouts = [s for _, s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert checkouts
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    assert [(where, s["run"]) for where, s in steps if "${{" in s.get("run", "")] == []
    # Shallow clones: a job that synthesizes needs the colours' revisions (model/revisions.py), so full history and tags.
    synthesizing = {where for where, s in steps if s.get("run") == "make synth"}
    shallow = [
        w
        for w, s in steps
        if w in synthesizing
        and s.get("uses", "").startswith("actions/checkout@")
        and (s["with"].get("fetch-depth"), s["with"].get("fetch-tags")) != (0, True)
    ]
    assert synthesizing
    assert shallow == []


# --- which stacks a change deploys ----------------------------------------------------------------

CONFIG: dict[str, Any] = {
    "project": "ci-test",
    "clusters": {"blue": {"weight": 100, "gitops_revision": "v1"}, "green": {"weight": 0}},
}


def synthesized(into: Path, config: Mapping[str, Any], stacks: Mapping[str, str]) -> Path:
    """A checkout as `make synth` leaves it, as far as changed_stacks reads it: cdktf.json, its config, cdktf.out."""
    into.mkdir(parents=True)
    (into / "cdktf.json").write_text(json.dumps({"context": {"config": "config.json"}}))
    (into / "config.json").write_text(json.dumps(config))
    for stack, body in stacks.items():
        (into / "cdktf.out" / "stacks" / stack).mkdir(parents=True)
        (into / "cdktf.out" / "stacks" / stack / "cdk.tf.json").write_text(body)
    return into


BASE_STACKS = {"common": "c1", "traffic": "t1", "blue": "b1", "green": "g1"}


def test_a_colours_own_change_deploys_that_colour_only(tmp_path: Path) -> None:
    base = synthesized(tmp_path / "base", CONFIG, BASE_STACKS)
    head_config = copy.deepcopy(CONFIG)
    head_config["clusters"]["green"]["kubernetes_version"] = "1.36"
    head = synthesized(tmp_path / "head", head_config, {**BASE_STACKS, "green": "g2"})
    assert changed_stacks(base, head) == Changes(deploy=["green"], named=["green"])


def test_a_change_to_common_names_no_colour_so_the_deploy_freezes_whichever_serves_live(tmp_path: Path) -> None:
    """common's edit changes every colour's synthesized stack and names no colour's entry: which of them serves (and is
    frozen) the deploy decides from the live weights when it runs (tests/test_serving_colour.py), not config.json's."""
    base = synthesized(tmp_path / "base", CONFIG, BASE_STACKS)
    head = synthesized(tmp_path / "head", CONFIG, {"common": "c2", "traffic": "t1", "blue": "b2", "green": "g2"})
    changes = changed_stacks(base, head)
    assert changes == Changes(deploy=["common", "blue", "green"], named=[])
    assert "- blue: changed, its entry `clusters.blue` unchanged: deployed only if it has no live weight" in report(changes)


def test_the_serving_colours_own_edit_names_it_and_a_dropped_colour_is_retired_first(tmp_path: Path) -> None:
    base = synthesized(tmp_path / "base", CONFIG, BASE_STACKS)
    head_config = {"project": "ci-test", "clusters": {"blue": {"weight": 100, "gitops_revision": "v2"}}}
    head = synthesized(tmp_path / "head", head_config, {"common": "c1", "traffic": "t1", "blue": "b2"})
    changes = changed_stacks(base, head)
    assert changes == Changes(deploy=["blue"], named=["blue"], removed=["green"])
    assert "- green: removed from the configuration. The traffic stack refuses this while green's cluster runs: retire it" in (
        report(changes)
    )


# --- shallow clones --------------------------------------------------------------------------------


def test_a_depth_one_clone_fetches_the_colours_revisions_or_says_in_one_line_what_to_set(tmp_path: Path) -> None:
    """actions/checkout's default (depth 1, no tags) lacks blue's tag: fetched from origin when it can be; otherwise
    one line naming the key and what to set."""
    origin = synthesized(tmp_path / "origin", CONFIG, {})
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "release")
    git(origin, "tag", "v1")
    (origin / "notes").write_text("after the release")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "after")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-tags", f"file://{origin}", str(clone))
    assert missing_revisions(clone) == [f"clusters.blue.gitops_revision: 'v1' is not in this clone; {FETCH_HINT}"]
    assert missing_revisions(clone, fetch=True) == []  # the tag's one commit, from origin
    assert git(clone, "tag").split() == ["v1"]
    # A revision origin lacks too (a tag not pushed): still the one line, after the fetch was tried.
    (clone / "config.json").write_text(json.dumps({**CONFIG, "clusters": {"blue": {"weight": 100, "gitops_revision": "v9"}}}))
    assert missing_revisions(clone, fetch=True) == [f"clusters.blue.gitops_revision: 'v9' is not in this clone; {FETCH_HINT}"]


def test_a_depth_one_clone_of_a_pull_request_fetches_its_base_branch(tmp_path: Path) -> None:
    """actions/checkout clones the pull request's branch alone, one commit deep: the base branch is fetched, one
    commit, before it is synthesized beside the checkout."""
    origin = synthesized(tmp_path / "origin", CONFIG, {})
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    base = git(origin, "rev-parse", "HEAD").strip()
    git(origin, "checkout", "-q", "-b", "feature")
    (origin / "notes").write_text("the change")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "head")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(clone))
    ref = base_ref_from_github({"GITHUB_BASE_REF": "main"})
    assert subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=clone).returncode == 1
    fetched(clone, str(ref))
    assert git(clone, "rev-parse", f"{ref}^{{commit}}").strip() == base
    assert git(clone, "rev-list", "--count", "--all").strip() == "2"  # the base's one commit, not its history


def test_a_colour_following_a_branch_this_clone_did_not_check_out_is_fetched_and_found(tmp_path: Path) -> None:
    """green follows `main`; the clone has the pull request's branch only. Fetched, main is `origin/main` and no local
    branch: found there, as synth finds it (model/revisions.py, commit_of)."""
    origin = synthesized(tmp_path / "origin", CONFIG, {})
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "base")
    git(origin, "tag", "v1")
    git(origin, "checkout", "-q", "-b", "feature")
    following = {**CONFIG, "clusters": {**CONFIG["clusters"], "green": {"weight": 0, "gitops_revision": "main"}}}
    (origin / "config.json").write_text(json.dumps(following))
    git(origin, "commit", "-q", "-am", "green follows main")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-tags", "--branch", "feature", f"file://{origin}", str(clone))
    assert missing_revisions(clone) == [
        f"clusters.blue.gitops_revision: 'v1' is not in this clone; {FETCH_HINT}",
        f"clusters.green.gitops_revision: 'main' is not in this clone; {FETCH_HINT}",
    ]
    assert missing_revisions(clone, fetch=True) == []
    assert git(clone, "branch", "--list").split() == ["*", "feature"]  # main is origin/main only


def test_the_scripts_are_listed_and_need_no_virtualenv(project_dir: Path) -> None:
    """The workflows run `python3 -m scripts.ci.stacks` and `--check-clone` before `make synth` makes .venv, and
    `credential_expiry` with the runner's python3 too."""
    for module in ("stacks", "changed_stacks", "credential_expiry"):
        source = (project_dir / "scripts" / "ci" / f"{module}.py").read_text()
        imported = set(re.findall(r"^(?:from|import) (\w+)", source, flags=re.M))
        assert imported <= {
            "__future__",
            "argparse",
            "json",
            "os",
            "re",
            "subprocess",
            "sys",
            "collections",
            "dataclasses",
            "datetime",
            "pathlib",
            "typing",
            "model",
            "scripts",
        }, (module, imported)
    assert shutil.which("python3")


# What GitHub puts in a job's OIDC subject (policies/pipeline.py pins each role's trust to one): a job that names an
# environment gets `environment:<name>`; a pull request's job without one gets `pull_request`.
TRUSTED_JOB = {
    f"${{{{ vars.{VARIABLES['plan']} }}}}": None,
    f"${{{{ vars.{VARIABLES['deployer']} }}}}": DEFAULT_DEPLOY_ENVIRONMENT,
    f"${{{{ vars.{VARIABLES['traffic']} }}}}": DEFAULT_TRAFFIC_ENVIRONMENT,
}


def trust_problems(workflows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each job that assumes a role runs where that role's trust admits it: a role of another environment would be
    refused by STS at the first step, after the approval, with nothing said before."""
    found = []
    for wf, body in workflows.items():
        for name, job in body["jobs"].items():
            for step in job.get("steps", []):
                if CREDENTIALS_ACTION not in step.get("uses", ""):
                    continue
                role = step["with"]["role-to-assume"]
                if TRUSTED_JOB[role] != job.get("environment"):
                    found.append(
                        f"{wf}.{name}: assumes {role} in environment {job.get('environment')}, trusted in {TRUSTED_JOB[role]}"
                    )
    return found


def test_every_role_is_assumed_where_its_trust_admits_it(workflows: dict[str, dict[str, Any]]) -> None:
    assert trust_problems(workflows) == []
    broken = copy.deepcopy(workflows)
    broken["retire"]["jobs"]["retire"]["environment"] = DEFAULT_TRAFFIC_ENVIRONMENT
    assert trust_problems(broken) == [
        "retire.retire: assumes ${{ vars.DEPLOY_ROLE_ARN }} in environment traffic, trusted in deploy"
    ]


def test_the_names_the_ci_scripts_spell_again_are_the_models() -> None:
    """scripts/ci/stacks.py cannot import model/config/ (pydantic) on the runner's bare python3: its copies stay equal."""
    assert (COMMON_STACK, Config().project) == (ci_stacks.COMMON, ci_stacks.DEFAULT_PROJECT)


# --- reaching the clusters, long sessions, forks ----------------------------------------------------------------------

# A step operating a colour's cluster: the module and the colour argument it is given (deploy's common and traffic run
# deploy_stacks too, on no cluster).
COLOUR_COMMANDS = {"scripts.ci.deploy_stacks": '"$COLOUR"', "tools.retire": '"$COLOUR"', "tools.shift": '--to "$TO"'}
REACH = "scripts.ci.reach_cluster"
RUNS_ON = f"vars.{RUNNER_VARIABLE} || 'ubuntu-latest'"
ROLE_NAMES = {f"${{{{ vars.{variable} }}}}": role for role, variable in VARIABLES.items()}
# IAM's bounds of a session (IAM API reference, CreateRole MaxSessionDuration: 1 to 12 hours).
LONGEST_SESSION = 43200


def operates_a_colour(step: Mapping[str, Any]) -> bool:
    return any(f"-m {module} {argument}" in str(step.get("run", "")) for module, argument in COLOUR_COMMANDS.items())


def index_of(steps: list[dict[str, Any]], found: Any) -> int:
    return next((i for i, step in enumerate(steps) if found(step)), len(steps))


def reach_problems(workflows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A job operating a colour runs where the team's runner variable says (GitHub's hosted runner by default), and
    checks its colour's API, with its credentials, before anything operates the cluster."""
    found = []
    for wf, body in workflows.items():
        for name, job in body["jobs"].items():
            steps = job.get("steps", [])
            acting = index_of(steps, operates_a_colour)
            if acting == len(steps):
                continue
            if RUNS_ON not in str(job.get("runs-on")):
                found.append(f"{wf}.{name}: runs-on {job.get('runs-on')!r} does not read {RUNS_ON}")
            reach = index_of(steps, lambda step: f"-m {REACH} " in str(step.get("run", "")))
            credentials = index_of(steps, lambda step: CREDENTIALS_ACTION in step.get("uses", ""))
            if not credentials < reach < acting:
                found.append(f"{wf}.{name}: {REACH} is step {reach}, not between the credentials ({credentials}) and {acting}")
    return found


def test_jobs_operating_a_colour_run_where_it_is_reachable_and_check_that_first(workflows: dict[str, dict[str, Any]]) -> None:
    assert reach_problems(workflows) == []
    operating = sorted(
        f"{wf}.{job}" for wf, body in workflows.items() for job, spec in body["jobs"].items() if RUNS_ON in str(spec["runs-on"])
    )
    assert operating == ["deploy.colour", "retire.retire", "shift.shift"]
    # The emergency drain calls no cluster: a hosted runner, whatever state the team's runners are in.
    assert workflows["shift"]["jobs"]["shift"]["runs-on"].startswith("${{ inputs.now && 'ubuntu-latest' || ")


def test_fails_a_colour_job_on_a_hosted_runner_or_checking_after_it_acts(workflows: dict[str, dict[str, Any]]) -> None:
    broken = copy.deepcopy(workflows)
    broken["deploy"]["jobs"]["colour"]["runs-on"] = "ubuntu-latest"
    steps = broken["retire"]["jobs"]["retire"]["steps"]
    (reach,) = [step for step in steps if REACH in str(step.get("run", ""))]
    steps.remove(reach)
    steps.append(reach)
    assert [p.split(":")[0] for p in reach_problems(broken)] == ["deploy.colour", "retire.retire"]


def session_problems(workflows: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each job operating a colour asks for its role's longest session (what policies.pipeline lets the role allow);
    the shift and the retire hand the credentials' expiry to botocore before they run."""
    found = []
    for wf, body in workflows.items():
        for name, job in body["jobs"].items():
            steps = job.get("steps", [])
            acting = index_of(steps, operates_a_colour)
            if acting == len(steps):
                continue
            credentials = next(step for step in steps if CREDENTIALS_ACTION in step.get("uses", ""))
            role = ROLE_NAMES[credentials["with"]["role-to-assume"]]
            asked = credentials["with"].get("role-duration-seconds")
            if asked != MAX_SESSION_SECONDS[role] or not 3600 < asked <= LONGEST_SESSION:
                found.append(f"{wf}.{name}: role-duration-seconds {asked}, the {role} allows {MAX_SESSION_SECONDS[role]}")
            if "-m tools.shift" not in steps[acting]["run"] and "-m tools.retire" not in steps[acting]["run"]:
                continue
            output = f"${{{{ steps.{credentials.get('id')}.outputs.aws-expiration }}}}"
            expiry = index_of(
                steps,
                lambda step, output=output: (
                    "-m scripts.ci.credential_expiry" in str(step.get("run", ""))
                    and step.get("env", {}).get(SOURCE_VARIABLE) == output
                ),
            )
            if credentials["with"].get("output-credentials") is not True or not expiry < acting:
                found.append(f"{wf}.{name}: no {EXPIRY_VARIABLE} from {output} before step {acting}")
    return found


def test_long_operations_ask_for_sessions_their_roles_allow_and_say_when_they_end(
    workflows: dict[str, dict[str, Any]],
) -> None:
    assert session_problems(workflows) == []
    broken = copy.deepcopy(workflows)
    (credentials,) = [s for s in broken["shift"]["jobs"]["shift"]["steps"] if CREDENTIALS_ACTION in s.get("uses", "")]
    del credentials["with"]["output-credentials"]
    (credentials,) = [s for s in broken["retire"]["jobs"]["retire"]["steps"] if CREDENTIALS_ACTION in s.get("uses", "")]
    credentials["with"]["role-duration-seconds"] = 3600
    assert session_problems(broken) == [
        f"shift.shift: no {EXPIRY_VARIABLE} from ${{{{ steps.aws.outputs.aws-expiration }}}} before step 9",
        f"retire.retire: role-duration-seconds 3600, the deployer allows {MAX_SESSION_SECONDS['deployer']}",
    ]


SAME_REPOSITORY = "github.event.pull_request.head.repo.full_name == github.repository"
FORK = "github.event.pull_request.head.repo.full_name != github.repository"


def test_a_forks_pull_request_skips_the_plan_and_says_why(workflows: dict[str, dict[str, Any]]) -> None:
    """A fork's pull request gets no OIDC token: the plan job runs only for this repository's branches, and a job
    that needs no permission at all writes the note to the job summary."""
    jobs = workflows["pull-request"]["jobs"]
    changed = "needs.changes.outputs.stacks != '[]'"
    assert jobs["plan"]["if"] == f"{changed} && {SAME_REPOSITORY}"
    notes = {name: job for name, job in jobs.items() if FORK in str(job.get("if"))}
    assert list(notes) == ["fork-plan"]
    (note,) = notes.values()
    assert note["if"] == f"{changed} && {FORK}"
    assert note["permissions"] == {}
    assert not [s for s in note["steps"] if "uses" in s]
    (summary,) = [s["run"] for s in note["steps"]]
    assert summary.rstrip().endswith('>> "$GITHUB_STEP_SUMMARY"')
    assert "no OIDC token" in summary
    assert "push it to a branch of this repository" in summary


def test_the_shift_workflow_names_each_application_and_passes_independent(workflows: dict[str, dict[str, Any]]) -> None:
    """The step's own script run by bash, `python` standing in to show its arguments: each name of the `applications`
    input is an argument of its own (a name with a shell character stays data), and `independent` passes the flag."""
    trigger = next(value for key, value in workflows["shift"].items() if key in ("on", True))
    assert trigger["workflow_dispatch"]["inputs"]["applications"]["default"] == ""
    assert trigger["workflow_dispatch"]["inputs"]["independent"]["default"] is False
    (command,) = [s for s in workflows["shift"]["jobs"]["shift"]["steps"] if "python -m tools.shift --to" in s.get("run", "")]
    assert command["env"]["APPLICATIONS"] == "${{ inputs.applications }}"
    script = command["run"].replace("source scripts/env.sh", 'python() { printf "%s\\n" "$@"; }')

    def arguments(**inputs: str) -> list[str]:
        env = {"TO": "green", "NOW": "false", "DRY_RUN": "false", "BREAK_LOCK": "false", "INDEPENDENT": "false", **inputs}
        env["RUNNER_TEMP"] = "/tmp/r"
        done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    id_file = ["--id-file", "/tmp/r/shift-id"]  # the run's id, for the report step (test above)
    assert arguments(APPLICATIONS="") == ["-m", "tools.shift", "--to", "green", *id_file]
    assert arguments(APPLICATIONS="  orders web;id ", INDEPENDENT="true") == [
        "-m", "tools.shift", "--to", "green", "--independent", "--application", "orders", "--application", "web;id", *id_file,
    ]  # fmt: skip
