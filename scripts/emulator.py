"""The AWS emulator (moto's server) for `make rehearse` and the tests: a server process, its
credentials, the AWS settings that aim the SDKs and Terraform at it, and boto3 clients on it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import boto3

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def aws_settings(endpoint: str, region: str) -> dict[str, str]:
    """Every AWS_* variable a process needs to talk to the server, and no other."""
    return {**CREDENTIALS, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}


def environment(endpoint: str, region: str) -> dict[str, str]:
    """This process's environment for a child, with the machine's own AWS_* settings (a profile,
    real credentials) replaced by the server's: nothing it runs can reach a real account."""
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("AWS_")}
    return {**inherited, **aws_settings(endpoint, region)}


def client(service: str, endpoint: str, region: str) -> Any:
    keys = {name.lower(): value for name, value in CREDENTIALS.items()}
    return boto3.client(service, region_name=region, endpoint_url=endpoint, **keys)


class MotoProcess:
    """A moto server in a process of its own. The session's server (conftest's `moto_endpoint`) runs in
    this process, whose moto backends every `mock_aws` of the suite resets as it starts and stops (state
    a background check or the rehearsal builds must not vanish mid-run), and which cannot have settings
    of its own (loading AWS's managed policies into every in-process IAM backend costs the suite ~5 s)."""

    def __init__(self, port: int, settings: dict[str, str] | None = None) -> None:
        """settings: MOTO_* variables for the server, e.g. {"MOTO_ACM_VALIDATION_WAIT": "0"}."""
        self.endpoint = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
        env = {**os.environ, **(settings or {})}
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

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=30)


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
