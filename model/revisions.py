"""Files of this repository as a Git revision has them, not as the checkout does.

What a colour runs from this repository it runs at the colour's `gitops_revision`, so what reads those files
on its behalf reads them there too (readiness: the registry the colour's release was written against): a
colour following a tag stays byte-identical while `main` moves, and an uncommitted edit reaches no colour.
A revision is resolved to its commit, and the files are extracted once per commit under
.cache/revisions/<commit>/ (a commit never changes, so the copy is never stale).
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from model.paths import PROJECT_DIR

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
