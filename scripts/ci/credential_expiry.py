"""The job's AWS credentials' expiry, into the job's environment as AWS_CREDENTIAL_EXPIRATION:

    EXPIRATION='"2026-11-30T13:05:12.000Z"' python3 -m scripts.ci.credential_expiry    # appends to $GITHUB_ENV

botocore's EnvProvider reads that variable beside the keys (botocore/credentials.py, EnvProvider.EXPIRY_TIME), so a
boto3 command of the job (the shift, the retire and its destroy hook) knows when its credentials end: the shift
refuses to start when they would end before it does. The value is configure-aws-credentials' `aws-expiration` output,
set only with `output-credentials: true` (aws-actions/configure-aws-credentials v6.2.3, src/helpers.ts,
exportCredentials): STS's own Credentials.Expiration, so exact, where a time computed from the requested duration
would be off by however long the action took (its retries included). It is a JavaScript Date, which @actions/core
writes JSON-encoded (toCommandValue: `JSON.stringify` for anything but a string), so it arrives in quotes; written
here as a plain ISO 8601 time in UTC, as STS writes it. Standard library only: the runner's python3 runs it.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime

EXPIRY_VARIABLE = "AWS_CREDENTIAL_EXPIRATION"
SOURCE_VARIABLE = "EXPIRATION"  # the step's env, from `steps.<id>.outputs.aws-expiration`


def normalised(raw: str) -> str:
    """`"2026-11-30T13:05:12.000Z"` (quoted or not, any zone) -> `2026-11-30T13:05:12Z`; ValueError for anything that
    is no ISO 8601 time with a zone. Fractions of a second are dropped: the expiry read is never later than STS's."""
    text = raw.strip()
    if text.startswith('"'):
        text = json.loads(text)
        if not isinstance(text, str):
            raise ValueError(f"{raw!r} is no time")
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"{raw!r} has no time zone")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def main() -> int:
    raw = os.environ.get(SOURCE_VARIABLE, "")
    try:
        expiry = normalised(raw)
    except ValueError as err:
        print(
            f"credential_expiry: {SOURCE_VARIABLE}={raw!r} is no expiry time ({err}); give the credentials step an id and "
            "`output-credentials: true`, and this step `EXPIRATION: ${{ steps.<id>.outputs.aws-expiration }}`",
            file=sys.stderr,
        )
        return 1
    target = os.environ.get("GITHUB_ENV")
    if target:
        with open(target, "a", encoding="utf-8") as env:
            env.write(f"{EXPIRY_VARIABLE}={expiry}\n")
    print(f"{EXPIRY_VARIABLE}={expiry}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
