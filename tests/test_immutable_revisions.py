"""Issue #32 item 1: one push never reaches the serving colour and the new one together. What a revision of this
repository is (model/revisions.py `revision_kind`, told from a scratch Git repository's refs, never the network); synth
warning loudly about a colour with weight on a branch (model/config/); the shift refusing to give weight to one
(tools/shift/command.py), before any write, with `--now --force` still able to drain to it; the shipped configurations
showing the safe way; and no colour's facts carrying a weight, so a contract bump cannot freeze one."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

import main
from model.config import MOVING
from model.paths import PROJECT_DIR
from model.revisions import RevisionKind, revision_kind
from model.routes import weights_parameter
from model.rules import config_warnings
from model.values import cluster_facts
from tests.support.configs import ANOTHER_REPO, example_raw, validated, write_project
from tests.support.emulated_aws import PROJECT, REGION, Emulated, base_config
from tools.aws import Aws
from tools.kube import KubeError
from tools.shift.command import main as shift

TAG = "release-1"
KUBECTL = "kubectl -n argocd get application app-of-apps -o jsonpath='{.status.sync.revision}'"


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main with two commits; the first tagged (lightweight) and `annotated` (annotated); `origin`'s branch `feature`
    as a clone has it (no local branch); a branch and a tag spelled like hex."""
    repo = tmp_path_factory.mktemp("revisions") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "file").write_text("one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", TAG)
    git(repo, "tag", "-a", "annotated", "-m", "an annotated tag")
    (repo / "file").write_text("two\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "update-ref", "refs/remotes/origin/feature", "HEAD")
    git(repo, "branch", "cafe")
    git(repo, "tag", "beef")
    return repo


def first_commit(repo: Path) -> str:
    return git(repo, "rev-parse", f"{TAG}^{{commit}}")


# --- what a revision is -----------------------------------------------------------------------------------------------


def test_branches_local_and_of_origin_are_branches(repo: Path) -> None:
    assert revision_kind("main", project=repo) is RevisionKind.BRANCH
    assert revision_kind("feature", project=repo) is RevisionKind.BRANCH  # refs/remotes/origin/feature only
    assert revision_kind("HEAD", project=repo) is RevisionKind.BRANCH  # Argo CD's default branch
    assert revision_kind("cafe", project=repo) is RevisionKind.BRANCH  # hex, but a branch: the moving reading wins


def test_tags_lightweight_and_annotated_are_tags(repo: Path) -> None:
    assert revision_kind(TAG, project=repo) is RevisionKind.TAG
    assert revision_kind("annotated", project=repo) is RevisionKind.TAG
    assert revision_kind("beef", project=repo) is RevisionKind.TAG  # hex, but a tag


def test_full_and_abbreviated_commits_are_commits(repo: Path) -> None:
    commit = first_commit(repo)
    assert revision_kind(commit, project=repo) is RevisionKind.COMMIT
    assert revision_kind(commit[:7], project=repo) is RevisionKind.COMMIT
    # A full SHA names one content for ever, whether or not this clone has fetched it.
    assert revision_kind("0" * 40, project=repo) is RevisionKind.COMMIT


def test_what_this_clone_does_not_have_is_unknown(repo: Path, tmp_path: Path) -> None:
    assert revision_kind("release-2", project=repo) is RevisionKind.UNKNOWN  # a tag not fetched
    assert revision_kind("abcdef1", project=repo) is RevisionKind.UNKNOWN  # hex of no commit here
    assert revision_kind(TAG, project=tmp_path) is RevisionKind.UNKNOWN  # no Git repository
    assert {kind: kind.immutable for kind in RevisionKind} == {"commit": True, "tag": True, "branch": False, "unknown": False}


# --- synth's warning --------------------------------------------------------------------------------------------------


def two_colours(blue: str, green: str, *, green_weight: int = 0, blue_weight: int = 100) -> dict[str, Any]:
    return base_config(
        blue={"kubernetes_version": "1.35", "weight": blue_weight, "gitops_revision": blue},
        green={"kubernetes_version": "1.36", "weight": green_weight, "gitops_revision": green},
    )


def revision_warnings(raw: dict[str, Any], repo: Path) -> list[str]:
    return [w for w in config_warnings(validated(raw), project=repo) if "revision" in w]


def test_a_serving_colour_on_a_branch_is_warned_about_loudly(repo: Path) -> None:
    assert revision_warnings(two_colours("main", "main"), repo) == [
        "ONE PUSH REACHES A SERVING COLOUR: clusters.blue.gitops_revision 'main' is a branch, and blue serves traffic "
        "(weight 100): one push to main reaches blue and green together, which blue/green exists to prevent. Tag the "
        f"commit blue runs (`{KUBECTL}` on blue's cluster): `git tag release-<date> <commit> && git push origin "
        'release-<date>`, and set clusters.blue.gitops_revision to "release-<date>" (docs/upgrade-runbook.md, "Pin the '
        'serving colour")'
    ]


def test_a_revision_this_clone_cannot_tell_is_warned_about_loudly_too(repo: Path) -> None:
    (warning,) = revision_warnings(two_colours("release-2", "main"), repo)
    assert warning == (
        "ONE PUSH REACHES A SERVING COLOUR: clusters.blue.gitops_revision 'release-2' is no branch, tag or commit this "
        "clone knows (a tag not fetched: `git fetch --tags origin`), so synth cannot tell that it never moves, and blue "
        "serves traffic (weight 100): if it is a branch, one push to it reaches blue at once, and every colour later "
        f"built on it. Tag the commit blue runs (`{KUBECTL}` on blue's cluster): `git tag release-<date> <commit> && git "
        'push origin release-<date>`, and set clusters.blue.gitops_revision to "release-<date>" '
        '(docs/upgrade-runbook.md, "Pin the serving colour")'
    )


def test_a_single_colour_inheriting_the_branch_is_named_by_the_project_key(repo: Path) -> None:
    raw = base_config(red={"kubernetes_version": "1.35", "weight": 7})
    del raw["clusters"]["red"]["gitops_revision"]
    (warning,) = revision_warnings({**raw, "gitops": {"revision": "main"}}, repo)
    assert warning.startswith(
        f"{MOVING}gitops.revision 'main' is a branch, and red serves traffic (weight 7): one push to main reaches red at "
        "once, and every colour later built on it. Tag the commit red runs"
    )


def test_a_serving_colour_on_a_tag_or_a_commit_is_not_warned_about(repo: Path) -> None:
    assert revision_warnings(two_colours(TAG, "main"), repo) == []
    assert revision_warnings(two_colours("annotated", "main"), repo) == []
    assert revision_warnings(two_colours(first_commit(repo), "main"), repo) == []
    assert revision_warnings(two_colours(first_commit(repo)[:8], "main"), repo) == []


def test_a_colour_without_weight_may_follow_a_branch(repo: Path) -> None:
    """That is how the colour being built rehearses; once it gets weight, it is warned about."""
    assert revision_warnings(two_colours(TAG, "main"), repo) == []
    (warning,) = revision_warnings(two_colours(TAG, "main", green_weight=10, blue_weight=90), repo)
    assert warning.startswith(f"{MOVING}clusters.green.gitops_revision 'main' is a branch, and green serves traffic (weight 10)")


def test_an_application_of_another_repository_is_warned_about_quietly_unless_at_a_full_commit(repo: Path) -> None:
    """Another repository cannot be looked into offline: a full SHA is known never to move, anything else is said."""
    shop = {
        "host": "shop",
        "source": {"repo_url": ANOTHER_REPO, "path": "charts/shop", "revision": "v1.0.0"},
        "health_check_path": "/health",
    }
    raw = base_config(
        applications={"shop": shop},
        blue={"kubernetes_version": "1.35", "weight": 100, "gitops_revision": TAG},
        green={"kubernetes_version": "1.36", "weight": 0, "gitops_revision": "main"},
    )
    assert revision_warnings(raw, repo) == [
        f"clusters.blue.applications.shop.revision 'v1.0.0' is a revision of {ANOTHER_REPO}, which synth cannot look "
        "into: if it is a branch, one push there reaches blue while it serves (weight 100). Name a tag that repository "
        "never moves, or a full 40-character commit SHA (which silences this)"
    ]
    raw["clusters"]["blue"]["applications"]["shop"]["revision"] = "1" * 40
    assert revision_warnings(raw, repo) == []


def test_synth_frames_the_warning_between_bars(capsys: pytest.CaptureFixture[str]) -> None:
    main._print_warnings([f"{MOVING}the branch", "a quieter one"])
    bar = "warning: " + "!" * 100
    assert capsys.readouterr().out.splitlines() == [bar, f"warning: {MOVING}the branch", bar, "warning: a quieter one"]


# --- the shipped configurations ---------------------------------------------------------------------------------------


def test_the_shipped_example_pins_the_serving_colour_to_a_tag(tmp_path: Path) -> None:
    """blue serves on a release tag, green (weight 0) is built from main. Judged in a repository of its own with that
    tag and a main branch: this clone may not have fetched the tag (`git fetch --tags origin`). (The operator's
    config.json ships the same, but no test reads it: tests/test_operator_edits.py.)"""
    raw = example_raw()
    clusters = raw["clusters"]
    assert (clusters["blue"]["weight"], clusters["green"]["weight"]) == (100, 0)
    assert clusters["green"]["gitops_revision"] == "main"
    scratch = tmp_path / "repo"
    scratch.mkdir()
    git(scratch, "init", "-q", "-b", "main")
    git(scratch, "commit", "-q", "--allow-empty", "-m", "release")
    git(scratch, "tag", clusters["blue"]["gitops_revision"])
    assert revision_kind(clusters["blue"]["gitops_revision"], project=scratch) is RevisionKind.TAG
    assert [w for w in config_warnings(validated(raw), project=scratch) if w.startswith(MOVING)] == []
    # The same file with blue on main, as it shipped before, is warned about: the check above can fail.
    clusters["blue"]["gitops_revision"] = "main"
    assert [w for w in config_warnings(validated(raw), project=scratch) if w.startswith(MOVING)] != []


# --- a contract bump cannot freeze a weight ---------------------------------------------------------------------------


def test_no_colour_s_facts_carry_a_weight() -> None:
    """Weights live in the traffic stack (the parameter and the load balancer's rules, moved by tools.shift), not in
    the facts the charts read at a colour's revision: a colour whose revision cannot render a newer contract keeps its
    weight, and the shift moves it all the same (docs/upgrade-runbook.md)."""
    config = validated(example_raw())

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return {k.lower() for k in value} | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        return set()

    for colour in config.clusters:
        facts = cluster_facts(config=config, colour=colour, common=str, target_group=str)
        assert not {k for k in keys(facts) if "weight" in k}, colour


# --- the shift --------------------------------------------------------------------------------------------------------


class Writes:
    """A client that records its write calls (anything but describe/get/list): the refusal must come before any."""

    def __init__(self, client: Any, log: list[str]) -> None:
        self._client, self._log = client, log

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if callable(attribute) and not name.startswith(("describe", "get", "list", "can_paginate")):
            self._log.append(name)
        return attribute


@pytest.fixture
def deployed(emulated: Emulated) -> Emulated:
    """blue serves the sample app, green is deployed beside it at weight 0; both colours' pods registered."""
    for colour, version in (("blue", "1.35"), ("green", "1.36")):
        emulated.deploy_cluster(colour, version)
    emulated.deploy_traffic({"sample-app": "app"}, {"blue": 100, "green": 0})
    emulated.register_pods("blue")
    emulated.register_pods("green")
    return emulated


def clients(aws: Emulated, writes: list[str]) -> Aws:
    def no_cluster(cluster: str) -> Any:
        raise KubeError(f"cannot reach {cluster}: Connection refused")

    return Aws(
        REGION,
        kube=no_cluster,
        route53=aws.route53,
        elbv2=Writes(aws.elbv2, writes),
        cloudwatch=aws.cloudwatch,
        eks=aws.eks,
        ssm=Writes(aws.ssm, writes),
        sts=aws.sts,
    )


def green_on_main(tmp_path: Path) -> Path:
    return write_project(tmp_path, two_colours(TAG, "main"))


def refusal(green: str = "green") -> str:
    return (
        f"refused: {green} follows the branch 'main' (clusters.{green}.gitops_revision): with weight, one push to it "
        f"reaches {green} while it serves, and every colour on it, together. Tag the commit {green} runs (`{KUBECTL}` on "
        f"{green}'s cluster): `git tag release-<date> <commit> && git push origin release-<date>`, and set "
        f'clusters.{green}.gitops_revision to "release-<date>" (docs/upgrade-runbook.md, "Pin the serving colour"), deploy '
        f"{green} (`cdktf deploy {green}`: Argo CD then follows the tag) and shift again. Nothing was changed; in an "
        f"emergency, `python -m tools.shift --to {green} --now --force` moves the traffic to it anyway\n"
    )


def test_the_gated_shift_refuses_weight_to_a_colour_on_a_branch_before_any_write(
    tmp_path: Path, deployed: Emulated, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writes: list[str] = []
    path = green_on_main(tmp_path)
    assert shift(["--to", "green", "--config", str(path)], aws=clients(deployed, writes), project=repo) == 2
    assert capsys.readouterr().err == refusal()
    assert writes == []
    assert deployed.forwarded() == {"sample-app": {"blue": 100, "green": 0}}
    assert deployed.ssm.get_parameters_by_path(Path=f"/{PROJECT}/traffic")["Parameters"][0]["Name"] == weights_parameter(
        PROJECT
    )  # and no lock was taken


def test_the_drain_refuses_a_colour_on_a_branch_unless_forced(
    tmp_path: Path, deployed: Emulated, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    writes: list[str] = []
    path = green_on_main(tmp_path)
    assert shift(["--to", "green", "--now", "--config", str(path)], aws=clients(deployed, writes), project=repo) == 2
    assert capsys.readouterr().err == refusal()
    assert writes == []
    assert deployed.forwarded() == {"sample-app": {"blue": 100, "green": 0}}
    # The drain must always be possible: --force moves the traffic, saying why it should not have to.
    forced = ["--to", "green", "--now", "--force", "--config", str(path)]
    assert shift(forced, aws=clients(deployed, writes), project=repo) == 0
    out = capsys.readouterr().out
    assert (
        "WARNING: --now: all traffic to green in one change, WITHOUT readiness or the metrics gate; --force: green "
        "follows the branch 'main' (clusters.green.gitops_revision): with weight, one push to it reaches green while it "
        "serves, and every colour on it, together"
    ) in out.splitlines()
    assert deployed.forwarded() == {"sample-app": {"blue": 0, "green": 100}}
    assert deployed.live_weights() == {"blue": 0, "green": 100}


def test_weight_taken_from_a_colour_on_a_branch_is_never_refused(
    tmp_path: Path, deployed: Emulated, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """green, on main, holds the traffic (forced there): draining back to blue, on its tag, needs no --force, and a gated
    shift to blue passes the revision check (its dry run, readiness skipped, changes nothing and exits 0)."""
    writes: list[str] = []
    path = green_on_main(tmp_path)
    assert shift(["--to", "green", "--now", "--force", "--config", str(path)], aws=clients(deployed, writes), project=repo) == 0
    capsys.readouterr()
    dry = ["--to", "blue", "--dry-run", "--skip-readiness", "--config", str(path)]
    assert shift(dry, aws=clients(deployed, []), project=repo) == 0
    assert shift(["--to", "blue", "--now", "--config", str(path)], aws=clients(deployed, writes), project=repo) == 0
    said = capsys.readouterr()
    assert "follows the branch" not in said.out + said.err
    assert deployed.forwarded() == {"sample-app": {"blue": 100, "green": 0}}
    assert deployed.live_weights() == {"blue": 100, "green": 0}


def test_the_section_the_messages_point_to_exists() -> None:
    """The warning and the refusal send the operator to docs/upgrade-runbook.md, "Pin the serving colour"."""
    assert "\n## Pin the serving colour\n" in (PROJECT_DIR / "docs" / "upgrade-runbook.md").read_text()
