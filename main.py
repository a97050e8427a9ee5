"""Entry point `cdktf synth` runs (cdktf.json "app"): load config, build stacks, synth."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from model.loading import ConfigError, load_config
from model.rules import LOUD_PREFIXES, config_warnings

# What the cdktf CLI sets for the app it runs (cdktf's CONTEXT_ENV; not imported: the refusal loads no jsii).
CONTEXT_ENV = "CDKTF_CONTEXT_JSON"


def main(outdir: str | None = None) -> int:
    """outdir: default: what the cdktf CLI asks for (CDKTF_OUTDIR), else ./cdktf.out."""
    try:
        config = load_config()
    except ConfigError as err:
        # Before App() exists: a bad config writes nothing to cdktf.out, and fails in a
        # fraction of a second instead of after the ~15 s the provider bindings take to load.
        _forget_previous_output(Path(outdir or os.environ.get("CDKTF_OUTDIR") or "cdktf.out"))
        return _refuse(err)
    _print_warnings(config_warnings(config))

    from cdktf import App

    from stacks.app import build

    build(App(outdir=outdir), config).synth()
    return 0


def _print_warnings(warnings: list[str]) -> None:
    """On stdout: the cdktf CLI labels every line of the app's stderr "[ERROR]", and these are not errors. A door open
    to the internet, or a serving colour one push can change, stands between bars of `!`, at every synth: not one line
    among the others."""
    bar = "warning: " + "!" * 100
    for warning in warnings:
        print(f"{bar}\nwarning: {warning}\n{bar}" if warning.startswith(LOUD_PREFIXES) else f"warning: {warning}")


def _refuse(err: ConfigError) -> int:
    """Say what is wrong, once. Run directly: on stderr, exit status 2. Run by the cdktf CLI (it passes the context in
    CDKTF_CONTEXT_JSON): the CLI shows the app's stderr live as "[ERROR]" lines and, after a non-zero exit, all of its
    output (stdout and stderr) again; so the problems go to stdout, the app exits 0 without a manifest, and the CLI
    adds one line ("synthesis failed ... manifest.json was not created") and exits 1 (tests/test_cli.py)."""
    if CONTEXT_ENV not in os.environ:
        print(err, file=sys.stderr)
        return 2
    print(f"{err}\nnothing synthesized: fix the configuration and run the command again")
    return 0


def _forget_previous_output(outdir: Path) -> None:
    """A refused config leaves no earlier synth behind: a `terraform plan` in cdktf.out/stacks/<stack>
    would otherwise plan yesterday's configuration without a word."""
    shutil.rmtree(outdir / "stacks", ignore_errors=True)
    (outdir / "manifest.json").unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
