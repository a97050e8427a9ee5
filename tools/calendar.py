"""`python -m tools.calendar`: where each colour stands on the EKS calendar (model/eks_calendar.yaml).

Every colour: its Kubernetes version, the end of standard and extended support, the days left at the
standard rate, its support type and its control plane's price per hour today; then the newest version EKS
offers and the platform release of the compatibility table that runs on it. Reads only the config: no AWS
call, so it answers with no credentials.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

from model.config import Config
from model.eks_calendar import CALENDAR, CALENDAR_NAME, WARN_DAYS
from model.loading import ConfigError, load_config
from model.platform import VERSIONED


def report(config: Config, today: dt.date) -> list[str]:
    rows = [("colour", "version", "standard until", "extended until", "days left", "support", "price/h", "")]
    for colour, cluster in config.clusters.items():
        found = CALENDAR.find(cluster.kubernetes_version)
        if found is None:  # the config's rules refuse it; said here rather than hidden
            rows.append((colour, cluster.kubernetes_version, "?", "?", "?", cluster.support_type, "?", f"not in {CALENDAR_NAME}"))
            continue
        days = found.days_to_standard_end(today)
        price = CALENDAR.price(found.version, cluster.support_type, today)
        if days <= 0:
            note = "extended support" if cluster.support_type == "EXTENDED" else "AWS upgrades it in place"
        else:
            note = f"within {WARN_DAYS} days" if days <= WARN_DAYS else ""
        rows.append(
            (
                colour,
                found.version,
                found.end_of_standard_support.isoformat(),
                found.end_of_extended_support.isoformat(),
                str(days),
                cluster.support_type,
                f"${price:.2f}",
                note,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    newest = CALENDAR.newest
    lines.append("")
    lines.append(
        f"newest on EKS: Kubernetes {newest.version} (released {newest.released.isoformat()}, standard support until "
        f"{newest.end_of_standard_support.isoformat()})"
    )
    release = {c.key: c.working_versions(newest.version) for c in VERSIONED}
    missing = [key for key, versions in release.items() if not versions]
    if missing:
        lines.append(
            f"no platform release of the compatibility table runs it yet: no {', '.join(missing)} row names "
            f"{newest.version} (argocd/apps/platform/*/component.yaml)"
        )
    else:
        pinned = ", ".join(f'"{key}": "{versions[0]}"' for key, versions in release.items())
        lines.append(f"a platform release for it (newest of the table): {{{pinned}}}")
    lines.append(f"(as of {today.isoformat()}; calendar: {CALENDAR_NAME})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.calendar", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=Path("cdktf.json"), help="the project file (default: cdktf.json)")
    parser.add_argument(
        "--today",
        type=dt.date.fromisoformat,
        default=None,
        help="the day to read the calendar for (YYYY-MM-DD; default: today, UTC)",
    )
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
    except ConfigError as err:
        print(f"refused: {err}", file=sys.stderr)
        return 2
    print("\n".join(report(config, args.today or dt.datetime.now(dt.UTC).date())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
