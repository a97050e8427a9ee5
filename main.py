"""Entry point `cdktf synth` runs (cdktf.json "app"): load config, build stacks, synth."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from model.config import LOUD_PREFIXES
from model.loading import ConfigError, load_config
from model.problems import ECHO_LIMIT, capped
from model.rules import config_warnings

# What the cdktf CLI sets for the app it runs (cdktf's CONTEXT_ENV; not imported: the refusal loads no jsii).
CONTEXT_ENV = "CDKTF_CONTEXT_JSON"


def main(outdir: str | None = None) -> int:
    """outdir: default: what the cdktf CLI asks for (CDKTF_OUTDIR), else ./cdktf.out. A synth that fails, whatever
    failed, leaves no earlier output behind (a `terraform plan` in <outdir>/stacks/<stack> would otherwise plan
    yesterday's configuration without a word) and says what failed in one line."""
    try:
        problem = _synth(outdir)
    except Exception as err:  # any failure, the construct tree's (jsii) included: one line, no traceback
        problem = f"synth failed: {_first_line(err)}"
    except BaseException:  # an interrupt: the output may be half written
        _forget_previous_output(_outdir(outdir))
        raise
    if problem is None:
        return 0
    _forget_previous_output(_outdir(outdir))
    return _refuse(problem)


def _synth(outdir: str | None) -> str | None:
    """None once synthesized, else what is wrong with the configuration."""
    try:
        config = load_config()
    except ConfigError as err:
        # Before App() exists: a bad config fails in a fraction of a second instead of after the ~15 s the provider
        # bindings take to load.
        return str(err)
    _print_warnings(config_warnings(config))

    from cdktf import App

    from stacks.app import build

    build(App(outdir=outdir), config).synth()
    return None


def _outdir(outdir: str | None) -> Path:
    return Path(outdir or os.environ.get("CDKTF_OUTDIR") or "cdktf.out")


def _first_line(err: Exception) -> str:
    """What failed, in one line: jsii's errors carry the JavaScript stack after their first line."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {capped(lines[0], 2 * ECHO_LIMIT) if lines else 'no message'}"


def _print_warnings(warnings: list[str]) -> None:
    """On stdout: the cdktf CLI labels every line of the app's stderr "[ERROR]", and these are not errors. A door open
    to the internet, or a serving colour one push can change, stands between bars of `!`, at every synth: not one line
    among the others."""
    bar = "warning: " + "!" * 100
    for warning in warnings:
        print(f"{bar}\nwarning: {warning}\n{bar}" if warning.startswith(LOUD_PREFIXES) else f"warning: {warning}")


def _refuse(problem: str) -> int:
    """Say what is wrong, once. Run directly: on stderr, exit status 2. Run by the cdktf CLI (it passes the context in
    CDKTF_CONTEXT_JSON): the CLI shows the app's stderr live as "[ERROR]" lines and, after a non-zero exit, all of its
    output (stdout and stderr) again; so the problems go to stdout, the app exits 0 without a manifest, and the CLI
    adds one line ("synthesis failed ... manifest.json was not created") and exits 1 (tests/test_cli.py)."""
    if CONTEXT_ENV not in os.environ:
        print(problem, file=sys.stderr)
        return 2
    print(f"{problem}\nnothing synthesized: fix what is named above and run the command again")
    return 0


def _forget_previous_output(outdir: Path) -> None:
    shutil.rmtree(outdir / "stacks", ignore_errors=True)
    (outdir / "manifest.json").unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
