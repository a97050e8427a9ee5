"""Scratch copies of the project: its files linked, with files of their own where they differ."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from model.paths import PROJECT_DIR


def link_project(directory: Path, *, own: Collection[str]) -> None:
    """Create directory with a link to each of the project's top-level entries but those named in
    own (the caller writes those: its cdktf.json, its output, its state)."""
    directory.mkdir(parents=True)
    for entry in PROJECT_DIR.iterdir():
        if entry.name not in own:
            (directory / entry.name).symlink_to(entry)
