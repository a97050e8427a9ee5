"""`python -m tools.readiness <colour>`: the readiness report of one colour, on its own (the shift prints the same
before it moves any weight). Exit status: 0 ready; 1 not ready (the report names what is missing); 2 could not
check (a config refused, no usable credentials, access denied): one line says what to do."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from model.loading import ConfigError, load_config
from model.platform import Component
from tools.aws import Aws
from tools.cli import exit_status
from tools.clock import Clock, SystemClock
from tools.readiness import Readiness, missing
from tools.readiness.insights import SKIP_FLAG
from tools.readiness.probe import Prober


class NotReadyError(Exception):
    pass


class UnknownColourError(Exception):
    pass


def main(
    argv: Sequence[str] | None = None,
    *,
    aws: Aws | None = None,
    clock: Clock | None = None,
    prober: Prober | None = None,
    components: Callable[[str], tuple[Component, ...]] | None = None,
) -> int:
    """aws, clock, prober, components: the world to check (tests); default: the real one."""
    parser = argparse.ArgumentParser(prog="python -m tools.readiness", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("colour", help="the colour to check")
    parser.add_argument(
        SKIP_FLAG,
        action="store_true",
        help="read EKS upgrade insights as EKS last computed them (about daily) instead of asking for a refresh",
    )
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    args = parser.parse_args(argv)

    def run() -> None:
        config = load_config(args.config)
        if args.colour not in config.clusters:
            raise UnknownColourError(f"{args.colour!r} is not a configured colour; use one of {', '.join(config.clusters)}")
        checks = Readiness(
            config,
            aws or Aws(config.region),
            clock or SystemClock(),
            refresh_insights=not args.skip_insights_refresh,
            prober=prober,
            components=components,
            out=_say,
        )
        print(f"readiness of {args.colour}:", flush=True)
        findings = checks.check(args.colour)  # each line said as it is known
        if gaps := missing(findings):
            raise NotReadyError(f"{args.colour} is not ready: {len(gaps)} check(s) MISSING (above)")
        print(f"{args.colour} is ready for traffic: python -m tools.shift --to {args.colour}")

    return exit_status(run, refused=(ConfigError, UnknownColourError), failed=(NotReadyError,))


def _say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
