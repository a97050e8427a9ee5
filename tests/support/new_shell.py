"""A new user's shell: the machine's environment without what `source scripts/env.sh` adds (pytest's own process
has those: tests/conftest.py), for the tests that run README's commands by hand (tests/test_env.py, tests/test_cli.py)."""

from __future__ import annotations

import os

from scripts import env as project_env

# What scripts/env.py sets (TF_CLI_CONFIG_FILE and the lock switch only where there is a provider mirror).
NAMES = (
    "PATH",
    "CHECKPOINT_DISABLE",
    "NODE_OPTIONS",
    project_env.JSII_CACHE_ROOT,
    "PYTHONPYCACHEPREFIX",
    "PYTHONDONTWRITEBYTECODE",
    "TF_CLI_CONFIG_FILE",
    project_env.SKIP_PROVIDER_LOCK,
    "CI",
)
# make's own: under `make test` the jobserver flags would reach a make the test starts (a warning on stderr).
MAKE_VARIABLES = ("BASH_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT", "MAKE_TERMERR")


def a_new_users_environment(*, without_prefixes: tuple[str, ...] = ()) -> dict[str, str]:
    """without_prefixes: leave out variables with these prefixes too (the machine's AWS settings, say)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (*NAMES[1:], *MAKE_VARIABLES) and not k.startswith(("PYTEST", "COV_", *without_prefixes))
    }
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p not in project_env.TOOL_DIRS)
    return env
