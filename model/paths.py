"""Where the repository is: the one place that knows, so no module counts `.parent`s of its own."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
# The Helm charts of this repository: the App of Apps (with the component registry) and its applications' charts.
CHARTS_DIR = PROJECT_DIR / "argocd"
# The configuration the project ships, tests and documents (never the operator's cdktf.json, which a team edits).
EXAMPLE_CONFIG = PROJECT_DIR / "examples" / "blue-green.json"
# The interpreter Terraform's local-exec steps run (the destroy hook, the log-group step), relative to the project on
# the machine that applies; without it they run `python3` from PATH (components/destroy_hook.py `python_command`).
VENV_PYTHON = ".venv/bin/python"


def tools_first(path: str) -> str:
    """A PATH with the pinned Node (node_modules/.bin) and the project's virtualenv first, as the Makefile
    sets it: the cdktf CLI and the jsii runtime never run on the machine's own (possibly end-of-life) Node."""
    return os.pathsep.join([str(PROJECT_DIR / "node_modules" / ".bin"), str(PROJECT_DIR / ".venv" / "bin"), path])
