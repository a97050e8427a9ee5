"""A real copy of the project, as a fork or a fresh clone has it: for tests that edit what a team edits (its
configuration) and run what a team runs, without touching this checkout.

Real files, not links (scripts/scratch_project.py links instead): a link resolves back to this checkout, where the
operator's configuration is another one, and `make docs`' generators would write this checkout's README.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support.git import git

# Installed by `make synth`, and large: a copy shares the checkout's (linked) instead of installing its own.
INSTALLED = (".venv", "node_modules")
# What the Makefile compares the installations' stamps against: older than any stamp, nothing is reinstalled.
LOCK_FILES = ("Pipfile.lock", "package-lock.json")
OLD = 946684800  # 2000-01-01


def tracked_copy(project_dir: Path, into: Path) -> Path:
    """The project's files Git tracks or would (not ignored), copied into `into`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=project_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (project_dir / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project_dir / name, into / name)
    return into


def runnable_copy(project_dir: Path, into: Path) -> Path:
    """tracked_copy, with the checkout's installations linked (the lock files made older than them) and the copy a Git
    repository of its own, its files committed: `git status` there says what a run changed."""
    tracked_copy(project_dir, into)
    for name in INSTALLED:
        (into / name).symlink_to((project_dir / name).resolve())
    for name in LOCK_FILES:
        os.utime(into / name, (OLD, OLD))
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "the project as copied"]):
        git(into, *command)
    return into
