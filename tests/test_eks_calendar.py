"""The EKS calendar is data (model/eks_calendar.yaml): supported versions derive from it, synth warns before a
colour's standard support ends, and `python -m tools.calendar` shows where each colour stands."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from model.eks_calendar import CALENDAR, CalendarError, load
from model.loading import ConfigError
from model.platform import VERSIONED
from model.rules import config_warnings
from scripts import docs as config_docs
from tests.support.configs import example_raw, named_release, validated, with_api_access
from tools import calendar

LATE_2026 = dt.date(2026, 11, 22)


def fails(raw: dict[str, Any]) -> tuple[str, ...]:
    """The problems synth would report (none: it synthesizes)."""
    try:
        validated(raw)
    except ConfigError as err:
        return tuple(err.problems)
    return ()


def with_colours(**colours: dict[str, Any]) -> dict[str, Any]:
    return {**example_raw(), "clusters": colours}


def calendar_lines(raw: dict[str, Any], today: dt.date) -> list[str]:
    return [w for w in config_warnings(validated(raw), today=today) if "standard support" in w or "older than" in w]


def test_supported_versions_are_the_calendars_rows() -> None:
    assert CALENDAR.supported == ("1.32", "1.33", "1.34", "1.35", "1.36")


def test_a_colour_on_1_36_with_the_new_platform_release_is_accepted() -> None:
    raw = with_colours(
        blue={"kubernetes_version": "1.35", "weight": 100, **named_release()},
        green={"kubernetes_version": "1.36", "weight": 0, "platform": {"argo_cd": "10.4.1"}},
    )
    assert fails(raw) == ()


def test_1_36_with_an_argo_cd_not_tested_on_it_is_refused_naming_the_one_that_is() -> None:
    raw = with_colours(
        blue={"kubernetes_version": "1.35", "weight": 100, **named_release()},
        green={"kubernetes_version": "1.36", "weight": 0, "platform": {"argo_cd": "10.1.4"}},
    )
    (problem,) = fails(raw)
    assert problem.startswith('clusters.green.platform.argo_cd: "10.1.4" is not allowed; green runs Kubernetes 1.36')
    assert "use 10.4.1 or 10.2.3" in problem


def test_a_version_not_in_the_calendar_is_refused_naming_the_calendar() -> None:
    (problem,) = fails(with_colours(blue={"kubernetes_version": "1.37", "weight": 100}))
    assert problem == (
        'clusters.blue.kubernetes_version: "1.37" is not allowed; not in the EKS calendar (model/eks_calendar.yaml); use '
        "one of 1.32, 1.33, 1.34, 1.35, 1.36. A version EKS has started to offer is a row there plus rows in the "
        "compatibility table (argocd/apps/platform/*/component.yaml)"
    )


def test_two_colours_may_run_the_same_version() -> None:
    """A platform-only or cluster-replacing rebuild is a new colour on the same version."""
    raw = with_colours(
        blue={"kubernetes_version": "1.35", "weight": 100, **named_release()},
        teal={"kubernetes_version": "1.35", "weight": 0},
    )
    assert fails(raw) == ()


def test_a_colour_near_the_end_of_standard_support_is_warned_with_the_date_and_days_left() -> None:
    raw = with_colours(blue={"kubernetes_version": "1.34", "weight": 100, **named_release()})
    assert calendar_lines(raw, LATE_2026) == [
        "clusters.blue: Kubernetes 1.34's EKS standard support ends on 2026-12-02, in 10 days; from then the control "
        "plane is billed at the extended rate ($0.60/h instead of $0.10/h) until 2027-12-02. Build the next colour on a "
        "newer version (`python -m tools.calendar`, model/eks_calendar.yaml)"
    ]


def test_under_standard_the_warning_says_aws_upgrades_in_place_and_past_the_end_it_counts_back() -> None:
    raw = with_colours(blue={"kubernetes_version": "1.33", "weight": 100, "support_type": "STANDARD", **named_release()})
    (line,) = calendar_lines(raw, LATE_2026)
    assert line.startswith(
        "clusters.blue: Kubernetes 1.33's EKS standard support ended on 2026-07-29, 116 days ago; from then support_type "
        "is STANDARD: AWS upgrades its control plane in place to the next version."
    )


def test_no_warning_beyond_ninety_days() -> None:
    raw = with_colours(blue={"kubernetes_version": "1.34", "weight": 100, **named_release()})
    assert calendar_lines(raw, dt.date(2026, 9, 2)) == []  # 91 days before
    assert len(calendar_lines(raw, dt.date(2026, 9, 3))) == 1  # 90


def test_the_shipped_config_names_no_colour_near_or_past_its_standard_support() -> None:
    assert calendar_lines(example_raw(), dt.date(2026, 11, 23)) == []


def test_a_new_colour_older_than_the_serving_one_is_warned() -> None:
    raw = with_colours(
        blue={"kubernetes_version": "1.36", "weight": 100, **named_release()},
        green={"kubernetes_version": "1.35", "weight": 0},
    )
    assert calendar_lines(raw, LATE_2026) == [
        "clusters.green runs Kubernetes 1.35, older than the 1.36 that serves now: shifting to it would be a downgrade"
    ]


def test_the_calendar_refuses_rows_whose_dates_are_out_of_order(tmp_path: Path) -> None:
    text = (Path(__file__).parent.parent / "model" / "eks_calendar.yaml").read_text()
    broken = tmp_path / "calendar.yaml"
    broken.write_text(text.replace("end_of_extended_support: 2028-08-02", "end_of_extended_support: 2027-01-01"))
    with pytest.raises(CalendarError, match=r"^model/eks_calendar.yaml: 1.36: released < end of standard < end of extended"):
        load(broken)


def test_the_price_is_extended_only_past_standard_support_and_only_under_extended() -> None:
    assert CALENDAR.price("1.34", "EXTENDED", LATE_2026) == 0.10
    assert CALENDAR.price("1.34", "EXTENDED", dt.date(2026, 12, 2)) == 0.60
    assert CALENDAR.price("1.34", "STANDARD", dt.date(2026, 12, 2)) == 0.10


def test_the_calendar_command_prints_every_colour_and_the_newest_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = with_colours(
        blue={"kubernetes_version": "1.34", "weight": 100, **named_release()},
        green={"kubernetes_version": "1.36", "weight": 0, "platform": {"argo_cd": "10.4.1"}, "support_type": "STANDARD"},
    )
    (tmp_path / "cdktf.json").write_text(json.dumps({"context": {"config": with_api_access(raw)}}))
    assert calendar.main(["--config", str(tmp_path / "cdktf.json"), "--today", "2026-12-03"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["blue", "1.34", "2026-12-02", "2027-12-02", "-1", "EXTENDED", "$0.60", "extended", "support"]
    assert lines[2].split() == ["green", "1.36", "2027-08-02", "2028-08-02", "242", "STANDARD", "$0.10"]
    assert lines[4] == "newest on EKS: Kubernetes 1.36 (released 2026-06-02, standard support until 2027-08-02)"
    prefix = "a platform release for it (newest of the table): "
    assert lines[5].startswith(prefix)
    release = json.loads(lines[5].removeprefix(prefix))
    # Every chart of the registry, at the newest version of its table that names 1.36 (Argo CD's: 10.4.1, written out).
    assert release == {c.key: c.working_versions("1.36")[0] for c in VERSIONED}
    assert release["argo_cd"] == "10.4.1"


def test_the_calendar_command_refuses_a_bad_config_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cdktf.json").write_text(json.dumps({"context": {"config": with_colours(blue={"kubernetes_version": "1.37"})}}))
    assert calendar.main(["--config", str(tmp_path / "cdktf.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refused: ")
    assert "Traceback" not in err


def test_the_calendar_table_in_the_docs_is_the_data() -> None:
    reference = config_docs.REFERENCE.read_text()
    assert config_docs.with_table(reference) == reference, "stale: run `make docs`"
    assert "| 1.36 | 2026-06-02 | 2027-08-02 | 2028-08-02 |" in reference
