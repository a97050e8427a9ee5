"""Files of this repository as a Git revision has them, not as the checkout does.

What a colour runs from this repository it runs at the colour's `gitops_revision`, so what reads those files
on its behalf reads them there too (readiness: the registry the colour's release was written against): a
colour following a tag stays byte-identical while `main` moves, and an uncommitted edit reaches no colour.
A revision is resolved to its commit, and the files are extracted once per commit under
.cache/revisions/<commit>/ (a commit never changes, so the copy is never stale).

And what kind of revision a name is (`revision_kind`): a colour with weight must follow one that never moves (a tag or
a commit), or one push to its branch reaches it and the colour being built together. Told from this clone's refs
alone, never the network (synth and the shift run offline): a tag the clone has not fetched is `unknown`, not a tag.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from model.paths import PROJECT_DIR

if TYPE_CHECKING:
    from model.config import Config

CACHE = PROJECT_DIR / ".cache" / "revisions"


class RevisionError(Exception):
    """A revision this repository does not have, or a path it does not hold; the message names the key."""


def _git(*args: str, project: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, check=False)


def commit_of(revision: str, *, key: str, project: Path = PROJECT_DIR) -> str:
    """The commit a branch, tag or commit names: a local one first, then the remote-tracking branch (a clone
    has `origin/<branch>` for branches it never checked out)."""
    for candidate in (revision, f"refs/remotes/origin/{revision}"):
        found = _git("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", project=project)
        if found.returncode == 0:
            return found.stdout.decode().strip()
    raise RevisionError(
        f"{key}: {revision!r} is no branch, tag or commit of this repository ({project}); `git fetch --tags origin` "
        "brings what the remote has, or name a revision that exists"
    )


def files_at(revision: str, path: str, *, key: str, project: Path = PROJECT_DIR, cache: Path = CACHE) -> Path:
    """The directory `path` as `revision` has it. key: the config key that names the revision, for errors."""
    commit = commit_of(revision, key=key, project=project)
    # One directory per path asked for, made whole by one rename: a path and one inside it never share a directory,
    # so an earlier copy of argocd/sample-app cannot pass for a copy of argocd. The `@` keeps these apart from the
    # directories an earlier layout of this cache left (cache/<commit>/<path>).
    root = cache / commit / ("@" + path.strip("/").replace("/", "%2F"))
    target = root / path
    if target.is_dir():
        return target
    archive = _git("archive", "--format=tar", commit, "--", path, project=project)
    if archive.returncode != 0:
        raise RevisionError(
            f"{key}: revision {revision!r} ({commit[:12]}) has no {path}/ ({archive.stderr.decode().strip()}); "
            f"name a revision that holds it"
        )
    root.parent.mkdir(parents=True, exist_ok=True)
    # Extracted beside, then renamed into place: a synth stopped halfway leaves no partial chart behind.
    scratch = Path(tempfile.mkdtemp(dir=root.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(scratch, filter="data")
        try:
            scratch.rename(root)
        except OSError:
            if not target.is_dir():  # another synth of the same commit won the race: its copy is the same
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return target


class RevisionKind(StrEnum):
    COMMIT = "commit"
    TAG = "tag"
    BRANCH = "branch"
    UNKNOWN = "unknown"  # not in this clone (a tag not fetched, a typo), or no Git repository here

    @property
    def immutable(self) -> bool:
        """A tag or a commit: what a colour with weight may follow. (Git lets a tag be moved by force; a team's tags
        for releases are never moved, and docs/upgrade-runbook.md says so.)"""
        return self in (RevisionKind.COMMIT, RevisionKind.TAG)


FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_ABBREVIATED_SHA = re.compile(r"^[0-9a-f]{4,39}$")  # git's shortest abbreviation is 4


def revision_kind(revision: str, *, project: Path = PROJECT_DIR) -> RevisionKind:
    """What `revision` names in this repository: one `git show-ref`, and a `git rev-parse` for an abbreviated commit.

    A name that is a branch (local, or `origin`'s as a clone has it) is a branch even if a tag or a hex string has the
    same spelling: the moving reading decides. `HEAD` is Argo CD's name for the default branch. A full 40-hex SHA is a
    commit whether or not this clone has it: it names one content for ever."""
    refs = _refs(project)
    if revision == "HEAD" or {f"refs/heads/{revision}", f"refs/remotes/origin/{revision}"} & refs:
        return RevisionKind.BRANCH
    if f"refs/tags/{revision}" in refs:
        return RevisionKind.TAG
    if FULL_SHA.match(revision):
        return RevisionKind.COMMIT
    if refs and _ABBREVIATED_SHA.match(revision):
        found = _git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", project=project)
        if found.returncode == 0:
            return RevisionKind.COMMIT
    return RevisionKind.UNKNOWN


def _refs(project: Path) -> frozenset[str]:
    """Every ref name of the repository; none when there is no repository (or no git) here."""
    try:
        listed = _git("show-ref", project=project)
    except OSError:
        return frozenset()
    # show-ref exits 1 in a repository without any ref, 128 outside a repository: no ref either way.
    return frozenset(line.split(" ", 1)[1] for line in listed.stdout.decode().splitlines() if " " in line)


@dataclass(frozen=True)
class FollowedRevision:
    """The revision of this repository a colour follows, the config key that names it, and its kind."""

    colour: str
    key: str  # clusters.<colour>.gitops_revision, or gitops.revision when the colour inherits it
    revision: str
    kind: RevisionKind


def followed_revision(config: Config, colour: str, *, project: Path = PROJECT_DIR) -> FollowedRevision:
    own = config.clusters[colour].gitops_revision
    key = f"clusters.{colour}.gitops_revision" if own is not None else "gitops.revision"
    revision = config.release(colour).gitops_revision
    return FollowedRevision(colour, key, revision, revision_kind(revision, project=project))
