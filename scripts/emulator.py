"""The AWS emulator (moto's server) for `make rehearse` and the tests: a server process, its
credentials, the AWS settings that aim the SDKs and Terraform at it, and boto3 clients on it.

With `iam=True` the server can enforce IAM (moto's own authorization: `enforce_iam()` turns it on once the
set-up is done) and records every call it authorizes or refuses, by caller, in a log: `make rehearse` and
the rehearsal tier deploy common as an identity that holds only the deployer policy (policies/deployer.py).

    python -m scripts.emulator --port 5000 [--host 127.0.0.1]    # the server with IAM enforcement possible
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import boto3

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
# The server appends one line per call it judged, `<allowed|denied> <caller ARN> <service:Action>`, to this file.
ACTION_LOG_ENV = "EMULATOR_ACTION_LOG"
BODILESS = ("GET", "HEAD", "DELETE")


def aws_settings(endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> dict[str, str]:
    """Every AWS_* variable a process needs to talk to the server, and no other."""
    return {**credentials, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}


def environment(endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> dict[str, str]:
    """This process's environment for a child, with the machine's own AWS_* settings (a profile,
    real credentials) replaced by the server's: nothing it runs can reach a real account."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**inherited, **aws_settings(endpoint, region, credentials)}


def client(service: str, endpoint: str, region: str, credentials: Mapping[str, str] = CREDENTIALS) -> Any:
    keys = {name.lower(): value for name, value in credentials.items()}
    return boto3.client(service, region_name=region, endpoint_url=endpoint, **keys)


class MotoProcess:
    """A moto server in a process of its own. The session's server (conftest's `moto_endpoint`) runs in
    this process, whose moto backends every `mock_aws` of the suite resets as it starts and stops (state
    a background check or the rehearsal builds must not vanish mid-run), and which cannot have settings
    of its own (loading AWS's managed policies into every in-process IAM backend costs the suite ~5 s)."""

    def __init__(self, port: int, settings: dict[str, str] | None = None, *, iam: bool = False) -> None:
        """settings: MOTO_* variables for the server, e.g. {"MOTO_ACM_VALIDATION_WAIT": "0"}.
        iam: serve with IAM enforcement possible (`enforce_iam`), recording every judged call in `action_log`."""
        self.endpoint = f"http://127.0.0.1:{port}"
        self.action_log: Path | None = None
        self._own_log = False
        env = {**os.environ, **(settings or {})}
        if iam:
            self._own_log = not env.get(ACTION_LOG_ENV)
            self.action_log = Path(env.get(ACTION_LOG_ENV) or _scratch_file(f"moto-actions-{port}-", ".log"))
            env[ACTION_LOG_ENV] = str(self.action_log)
            command = [sys.executable, "-m", "scripts.emulator", "--host", "127.0.0.1", "--port", str(port)]
        else:
            command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)

    def ready(self, timeout: float = 60) -> str:
        """The endpoint, once the server answers."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/data.json", timeout=5):
                    return self.endpoint
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise RuntimeError(f"moto server at {self.endpoint} did not start") from None
                time.sleep(0.2)

    def enforce_iam(self) -> None:
        """From now on every call is authorized against its caller's IAM policies (the calls so far, the set-up,
        were not): moto's INITIAL_NO_AUTH_ACTION_COUNT, set to 0 on the running server."""
        # Not form-encoded (urllib's default): the server reads the count from the raw body.
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            json.loads(answer.read())

    def judged(self) -> list[tuple[str, str, str]]:
        """(allowed|denied, caller ARN, service:Action) of every call judged since `enforce_iam`, in order."""
        if self.action_log is None or not self.action_log.exists():
            return []
        return [_judged_line(line) for line in self.action_log.read_text().splitlines() if line]

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=30)
        if self._own_log and self.action_log is not None:
            self.action_log.unlink(missing_ok=True)


def _judged_line(line: str) -> tuple[str, str, str]:
    outcome, caller, action = line.split(" ")
    return outcome, caller, action


def _scratch_file(prefix: str, suffix: str) -> str:
    import tempfile

    handle, path = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    os.close(handle)
    return path


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# --- the server with IAM enforcement: moto's, with two changes made in its own process -------------------


def _patch_moto_authorization(action_log: str | None) -> None:
    from moto.iam.access_control import IAMRequestBase

    check_signature = IAMRequestBase.check_signature
    check_action_permitted = IAMRequestBase.check_action_permitted
    lock = threading.Lock()

    def signature_of_a_bodiless_request(self: Any) -> str:
        auth = self._create_auth(self._access_key.create_credentials())
        request = self._create_aws_request()
        request.data = b""
        return str(auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request))

    def signature_checked_right(self: Any) -> None:
        # moto 5.2 computes the signature of a request without a body (Route53's GETs, EKS's ListClusters, ...) over
        # the request's parsed parameters, as if they were its body, so a correctly signed request fails with
        # SignatureDoesNotMatch (measured with moto 5.2.5). Such a request is checked as signed: with an empty body.
        # Every other request is checked as moto checks it, and an unknown access key is refused before this.
        given = self._get_string_between("Signature=", ",", self._headers["Authorization"])
        if self._method in BODILESS and not self._body and given == signature_of_a_bodiless_request(self):
            return
        check_signature(self)

    def recorded(self: Any, resource: str) -> None:
        outcome = "denied"
        try:
            check_action_permitted(self, resource)
            outcome = "allowed"
        finally:
            if action_log:
                with lock, open(action_log, "a") as log:
                    log.write(f"{outcome} {self._access_key.arn} {self._action}\n")

    IAMRequestBase.check_signature = signature_checked_right  # type: ignore[method-assign]
    IAMRequestBase.check_action_permitted = recorded  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scripts.emulator", description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    _patch_moto_authorization(os.environ.get(ACTION_LOG_ENV))
    from moto.server import main as moto_server

    moto_server(["-H", args.host, "-p", str(args.port)])


if __name__ == "__main__":
    main()
