"""git in a scratch repository, as a test's own identity (no user configuration needed, nothing signed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=ci", "-c", "user.email=ci@example.invalid", "-c", "commit.gpgsign=false")


def git(where: Path, *args: str) -> str:
    """Its standard output; raises when git fails."""
    return subprocess.run(["git", *IDENTITY, *args], cwd=where, capture_output=True, text=True, check=True).stdout
