"""`python3 -m scripts.ci.credential_expiry`: configure-aws-credentials' `aws-expiration` output, which @actions/core
writes JSON-encoded (a Date: `"2026-11-30T13:05:12.000Z"`, quotes included), into the job's environment as
AWS_CREDENTIAL_EXPIRATION, in a form botocore's own EnvProvider reads (issue 43, item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from botocore.credentials import EnvProvider

from model.paths import PROJECT_DIR
from scripts.ci.credential_expiry import normalised

# What `core.setOutput('aws-expiration', creds.Expiration)` writes for a Date: JSON.stringify's ISO form, in quotes.
FROM_THE_ACTION = json.dumps("2026-11-30T13:05:12.000Z")


@pytest.mark.parametrize(
    "raw",
    [FROM_THE_ACTION, "2026-11-30T13:05:12.000Z", "2026-11-30T13:05:12Z", " 2026-11-30T22:05:12+09:00\n"],
)
def test_the_expiry_is_a_plain_utc_iso_time_however_it_arrives(raw: str) -> None:
    assert normalised(raw) == "2026-11-30T13:05:12Z"


@pytest.mark.parametrize("raw", ["", '""', "2026-11-30T13:05:12", "tomorrow", json.dumps(1764508000)])
def test_fails_on_what_is_no_time_with_a_zone(raw: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 (each case fails in its own way: the parser's message)
        normalised(raw)


def run(tmp_path: Path, expiration: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The step as the workflow runs it: the runner's python3, the output in EXPIRATION, GitHub's env file."""
    env_file = tmp_path / "github_env"
    env_file.write_text("EARLIER=1\n")
    done = subprocess.run(
        [sys.executable, "-m", "scripts.ci.credential_expiry"],
        cwd=PROJECT_DIR,
        env={"PATH": "/usr/bin:/bin", "EXPIRATION": expiration, "GITHUB_ENV": str(env_file)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done, env_file


def test_the_step_appends_the_variable_botocore_reads(tmp_path: Path) -> None:
    done, env_file = run(tmp_path, FROM_THE_ACTION)
    assert (done.returncode, done.stderr) == (0, "")
    assert env_file.read_text() == "EARLIER=1\nAWS_CREDENTIAL_EXPIRATION=2026-11-30T13:05:12Z\n"
    # botocore's environment provider, given the keys and that line, knows when the credentials end.
    name, value = env_file.read_text().splitlines()[1].split("=", 1)
    credentials = EnvProvider({"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", name: value}).load()
    assert credentials._expiry_time == datetime(2026, 11, 30, 13, 5, 12, tzinfo=UTC)


def test_a_missing_output_fails_the_step_in_one_line(tmp_path: Path) -> None:
    """`output-credentials` not set: the output is empty, and the job must not run on without the expiry."""
    done, env_file = run(tmp_path, "")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith("credential_expiry: EXPIRATION='' is no expiry time (")
    assert "`output-credentials: true`" in line
    assert env_file.read_text() == "EARLIER=1\n"
