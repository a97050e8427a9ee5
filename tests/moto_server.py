"""Using the session's moto server (conftest's `moto_endpoint`): its credentials, the AWS
settings that aim the SDKs and Terraform at it, and boto3 clients on it."""

from __future__ import annotations

import os
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
