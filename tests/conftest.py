"""Shared fixtures. jsii loads the aws provider once per pytest process (~15 s); every module
synthesizes its configurations once and asserts many times on the result."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tools.terraformrc import PROJECT_DIR, configure_environment

if TYPE_CHECKING:
    from tests.synth import Synthesized

# The environment the Makefile sets, so that `pytest` alone behaves like `make test`. It must be
# in place before the first cdktf import starts the jsii runtime on whichever `node` is first.
os.environ["PATH"] = f"{PROJECT_DIR / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}"
os.environ.setdefault("CHECKPOINT_DISABLE", "1")
os.environ.setdefault("NODE_OPTIONS", "--max-old-space-size=4096 --no-deprecation")
configure_environment()


@pytest.fixture(scope="session")
def project_dir() -> Path:
    return PROJECT_DIR


@pytest.fixture(scope="session")
def default_app(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The project's own cdktf.json configuration, synthesized once for the whole session."""
    from stacks.config import load_config
    from tests.synth import synthesize

    return synthesize(load_config(PROJECT_DIR / "cdktf.json"), tmp_path_factory.mktemp("default"))
