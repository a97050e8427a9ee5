"""model/revisions.py: files as a revision has them, never as the checkout does, and a clear error naming
the config key for a revision the repository does not have."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from model.revisions import RevisionError, files_at

KEY = "clusters.blue.gitops_revision"


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    return subprocess.run(["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "charts" / "app").mkdir(parents=True)
    (repo / "charts" / "app" / "Chart.yaml").write_text("version: 1\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1")
    (repo / "charts" / "app" / "Chart.yaml").write_text("version: 2\n")
    git(repo, "commit", "-qam", "two")
    (repo / "charts" / "app" / "Chart.yaml").write_text("version: uncommitted\n")
    return repo


@pytest.mark.parametrize(("revision", "expected"), [("v1", "version: 1\n"), ("main", "version: 2\n")])
def test_the_files_are_the_revisions_not_the_checkouts(repo: Path, tmp_path: Path, revision: str, expected: str) -> None:
    found = files_at(revision, "charts/app", key=KEY, project=repo, cache=tmp_path / "cache")
    assert (found / "Chart.yaml").read_text() == expected
    # Extracted once per commit: the second read is the same directory.
    assert files_at(revision, "charts/app", key=KEY, project=repo, cache=tmp_path / "cache") == found


def test_a_commit_id_works_too(repo: Path, tmp_path: Path) -> None:
    commit = git(repo, "rev-parse", "v1").strip()
    found = files_at(commit[:10], "charts/app", key=KEY, project=repo, cache=tmp_path / "cache")
    assert commit in found.relative_to(tmp_path / "cache").parts


def test_a_path_asked_for_after_one_inside_it_is_whole(repo: Path, tmp_path: Path) -> None:
    """charts/app first, then charts: the second is every file of charts at the revision, not the first's copy."""
    (repo / "charts" / "other").mkdir()
    (repo / "charts" / "other" / "Chart.yaml").write_text("version: other\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "three")
    files_at("main", "charts/app", key=KEY, project=repo, cache=tmp_path / "cache")
    found = files_at("main", "charts", key=KEY, project=repo, cache=tmp_path / "cache")
    assert sorted(p.name for p in found.iterdir()) == ["app", "other"]
    # A cache an earlier layout left (cache/<commit>/<path>, here charts/ holding only app/) is not read either.
    commit = git(repo, "rev-parse", "main").strip()
    (tmp_path / "old" / commit / "charts" / "app").mkdir(parents=True)
    found = files_at("main", "charts", key=KEY, project=repo, cache=tmp_path / "old")
    assert sorted(p.name for p in found.iterdir()) == ["app", "other"]


def test_an_unknown_revision_names_the_key_and_the_way_out(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(RevisionError) as refused:
        files_at("platform-z", "charts/app", key=KEY, project=repo, cache=tmp_path / "cache")
    assert str(refused.value) == (
        f"{KEY}: 'platform-z' is no branch, tag or commit of this repository ({repo}); `git fetch --tags origin` "
        "brings what the remote has, or name a revision that exists"
    )


def test_a_revision_without_the_chart_is_refused(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(RevisionError, match=rf"^{KEY}: revision 'v1' \(\w{{12}}\) has no charts/other/"):
        files_at("v1", "charts/other", key=KEY, project=repo, cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("other"))
