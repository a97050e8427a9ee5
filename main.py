"""Entry point `cdktf synth` runs (cdktf.json "app"): load config, build stacks, synth."""

from __future__ import annotations

import sys

from model.loading import ConfigError, load_config
from model.rules import config_warnings


def main(outdir: str | None = None) -> int:
    """outdir: default: what the cdktf CLI asks for (CDKTF_OUTDIR), else ./cdktf.out."""
    try:
        config = load_config()
    except ConfigError as err:
        # Before App() exists: a bad config writes nothing to cdktf.out, and fails in a
        # fraction of a second instead of after the ~15 s the provider bindings take to load.
        print(err, file=sys.stderr)
        return 2
    for warning in config_warnings(config):
        print(f"warning: {warning}", file=sys.stderr)

    from cdktf import App

    from stacks.app import build

    build(App(outdir=outdir), config).synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
