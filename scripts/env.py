"""The environment every command of this project runs in, by hand or under make: the one place it is defined.

    source scripts/env.sh       # a shell gets it (bash or zsh, from any directory); the Makefile's recipes too
    python3 -m scripts.env [--path PATH] [--terminal]    # what env.sh evaluates: `export NAME='value'` lines

- PATH: the pinned Node 22 (node_modules/.bin) and the project's virtualenv first, so the cdktf CLI and the jsii
  runtime never run on the machine's own (possibly end-of-life) Node;
- TF_CLI_CONFIG_FILE: Terraform takes the providers of the local filesystem mirror, when the machine has one
  (scripts/terraformrc.py), so `cdktf deploy|diff|destroy` initialise offline as `make` does;
- CDKTF_SKIP_PROVIDER_LOCK, with the mirror: the cdktf CLI's `--skip-provider-lock` (its options read CDKTF_*
  variables). Without it the CLI runs `terraform providers lock -platform=linux_amd64` after `terraform init` on a
  stack with no lock file, which asks the public registry whatever the CLI config says, and fails offline
  ("Could not retrieve providers for locking"); `terraform init` has written the lock file from the mirror already;
- CHECKPOINT_DISABLE: Terraform and the cdktf CLI do not call HashiCorp's version check (an `[ERROR]` line offline);
- NODE_OPTIONS: cdktf keeps its own heap setting only when NODE_OPTIONS names one; jsii's deprecation notices are
  noise (each an `[ERROR]` line through the CLI); scripts/lazy_providers.cjs preloaded: the jsii runtime loads a
  provider binding's submodules as a synthesis uses them, not all 2,135 of aws's at start (~3.5 CPU-seconds of each
  synthesis's ~6; a `make test` starts ~20 of them);
- JSII_RUNTIME_PACKAGE_CACHE_ROOT: jsii unpacks each provider's bindings once (574 MB), not on every run, into its
  own default cache (~/.cache/aws/jsii/package-cache, named so that jsii skips its check of the directory's mode), which
  every checkout and every jsii app of the user share, as npm's and uv's caches are shared: a fresh clone's first
  synthesis takes 4 s, not 8. A cache root of the caller's own is kept;
- PYTHONPYCACHEPREFIX, PYTHONDONTWRITEBYTECODE empty: Python keeps the bytecode it compiles in .cache/pycache, never
  beside the sources (what a PYTHONDONTWRITEBYTECODE=1 of the machine's is usually there for), and writes it: with
  that setting every one of the ~70 Python processes a `make test` starts compiled every module it imported again
  (the cdktf bindings, boto3, moto, pytest; measured on a fresh clone, ~24 CPU-seconds of ~455, 16 s of its wall);
- CI=true when output goes to no terminal (a log, a pipe): the cdktf CLI then prints no spinner frames.
  A CI variable already set is kept.

Only the standard library and model/paths.py: the Makefile runs this before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from model.paths import PROJECT_DIR
from scripts.terraformrc import write_config

TOOL_DIRS = (str(PROJECT_DIR / "node_modules" / ".bin"), str(PROJECT_DIR / ".venv" / "bin"))
# --max-old-space-size: the cdktf CLI warns about a NODE_OPTIONS without it, and would otherwise set it itself.
NODE_OPTIONS = "--max-old-space-size=4096 --no-deprecation"
LAZY_PROVIDERS = PROJECT_DIR / "scripts" / "lazy_providers.cjs"
JSII_CACHE_ROOT = "JSII_RUNTIME_PACKAGE_CACHE_ROOT"
# jsii's own default on Linux (@jsii/kernel's defaultCacheRoot: ~/.cache/aws/jsii/package-cache, whatever XDG says).
JSII_CACHE = Path.home() / ".cache" / "aws" / "jsii" / "package-cache"
BYTECODE_CACHE = PROJECT_DIR / ".cache" / "pycache"
SKIP_PROVIDER_LOCK = "CDKTF_SKIP_PROVIDER_LOCK"


def environment(current: Mapping[str, str], *, terminal: bool) -> dict[str, str]:
    """The variables to set on top of current (the caller's environment); terminal: output goes to a terminal."""
    # Sourced again (a recipe under a shell that already has it), PATH does not grow: the tools move to the front.
    rest = [entry for entry in current.get("PATH", "").split(os.pathsep) if entry and entry not in TOOL_DIRS]
    variables = {
        "PATH": os.pathsep.join([*TOOL_DIRS, *rest]),
        "CHECKPOINT_DISABLE": "1",
        "NODE_OPTIONS": node_options(),
        JSII_CACHE_ROOT: current.get(JSII_CACHE_ROOT) or str(JSII_CACHE),
        "PYTHONPYCACHEPREFIX": str(BYTECODE_CACHE),
        "PYTHONDONTWRITEBYTECODE": "",  # empty is unset to Python; an exported empty value overrides the caller's
    }
    mirror_config = write_config()
    if mirror_config:
        variables["TF_CLI_CONFIG_FILE"] = str(mirror_config)
        variables[SKIP_PROVIDER_LOCK] = "true"
    if not terminal and "CI" not in current:
        variables["CI"] = "true"
    return variables


def node_options() -> str:
    return f"{NODE_OPTIONS} --require {node_option_value(str(LAZY_PROVIDERS))}"


def node_option_value(value: str) -> str:
    """value as one word of NODE_OPTIONS, which Node splits at spaces outside double quotes (a checkout's path may
    hold one)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def shell_lines(variables: Mapping[str, str]) -> str:
    return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in variables.items())


def main(argv: Sequence[str]) -> int:
    """--path: the caller's PATH (a pyenv shim running python3 adds its own entries to this program's);
    --terminal: the caller's output is a terminal (the caller knows: this program's stdout is a pipe)."""
    parser = argparse.ArgumentParser(prog="python3 -m scripts.env", description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", default=os.environ.get("PATH", ""), help="the caller's PATH")
    parser.add_argument("--terminal", action="store_true", help="the caller's output is a terminal")
    args = parser.parse_args(argv)
    sys.stdout.write(shell_lines(environment({**os.environ, "PATH": args.path}, terminal=args.terminal)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
