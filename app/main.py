"""Sample service: reads the shared DynamoDB table with its pod's EKS Pod Identity credentials.

Configured only from the environment: TABLE_NAME, AWS_REGION, CLUSTER_COLOR, IMAGE_TAG (and, for an
emulator, the SDK's standard AWS_ENDPOINT_URL). No credentials in code or image: boto3 takes
them from the Pod Identity agent.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from functools import cache
from typing import Any

import boto3
from boto3.dynamodb.types import TypeDeserializer
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse

log = logging.getLogger("sample-app")
REQUIRED_ENV = ("TABLE_NAME", "AWS_REGION")
COLOUR_HEADER = "X-Cluster-Color"
# Fail fast and let the SDK's standard retry mode absorb throttling, inside the probe timeouts.
CLIENT_CONFIG = Config(connect_timeout=2, read_timeout=5, retries={"mode": "standard", "total_max_attempts": 3})
_deserializer = TypeDeserializer()


# The most items one request reads and answers: `/` is behind an internet-facing load balancer, so no request lists
# the table (nor pages through it) and none costs more than one small Scan (Limit bounds the items read, not only those
# returned; DynamoDB API Reference, Scan: Limit).
MAX_ITEMS = 10


class TableUnavailableError(Exception):
    """DynamoDB could not answer: reported as 503 with a JSON body, never as a traceback."""


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        raise RuntimeError(f"missing environment variable(s): {', '.join(missing)}")
    yield


app = FastAPI(title="sample-app", lifespan=lifespan)


@cache
def dynamodb() -> Any:
    """One client per process: its connection pool and credentials serve every request."""
    session = boto3.session.Session(region_name=os.environ["AWS_REGION"])
    return session.client("dynamodb", config=CLIENT_CONFIG)


def table_name() -> str:
    return os.environ["TABLE_NAME"]


def plain(value: Any) -> Any:
    """DynamoDB's typed values as plain JSON: numbers as numbers, sets as lists."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | set | frozenset):
        items = [plain(v) for v in value]
        return sorted(items) if isinstance(value, set | frozenset) else items
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    return value


def item(raw: dict[str, Any]) -> dict[str, Any]:
    return {key: plain(_deserializer.deserialize(value)) for key, value in raw.items()}


def call(operation: str, **kwargs: Any) -> dict[str, Any]:
    try:
        response: dict[str, Any] = getattr(dynamodb(), operation)(**kwargs)
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "ClientError")
        log.warning("dynamodb %s on %s failed: %s", operation, kwargs.get("TableName"), code)
        raise TableUnavailableError(f"DynamoDB {operation} failed: {code}") from err
    except BotoCoreError as err:  # no credentials, endpoint unreachable, timeouts
        log.warning("dynamodb %s on %s failed: %s", operation, kwargs.get("TableName"), err)
        raise TableUnavailableError(f"DynamoDB {operation} failed: {type(err).__name__}") from err
    return response


def first_items() -> list[dict[str, Any]]:
    """At most MAX_ITEMS items: one Scan page of that size, never followed further."""
    page = call("scan", TableName=table_name(), Limit=MAX_ITEMS)
    return [item(raw) for raw in page.get("Items", [])]


@app.exception_handler(TableUnavailableError)
async def unavailable(_: Request, err: TableUnavailableError) -> JSONResponse:
    return JSONResponse(status_code=503, content={"error": str(err)})


@app.middleware("http")
async def name_the_colour(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """During a shift, clients can tell which cluster answered."""
    response = await call_next(request)
    response.headers[COLOUR_HEADER] = os.environ.get("CLUSTER_COLOR", "unknown")
    return response


@app.get("/")
def some_items() -> list[dict[str, Any]]:
    """A few items, never the table: the load balancer is open to the internet."""
    return first_items()


@app.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers. No AWS call, so an AWS outage does not restart pods."""
    return {"status": "ok"}


@app.get("/probe")
def probe() -> dict[str, Any]:
    """The end-to-end proof readiness asks for through the colour's preview host (tools/readiness/probe.py): the
    request crossed DNS, the ALB, TLS and this pod, which read the table with its Pod Identity credentials. It says
    which colour answered and the image tag it runs (the chart sets IMAGE_TAG from the colour's release)."""
    status = call("describe_table", TableName=table_name())["Table"]["TableStatus"]
    read = first_items()  # the very read `/` serves
    return {
        "colour": os.environ.get("CLUSTER_COLOR", "unknown"),
        "image_tag": os.environ.get("IMAGE_TAG", "unknown"),
        "table": table_name(),
        "table_status": status,
        "items_read": len(read),
    }


@app.get("/readyz")
def readyz() -> dict[str, str]:
    """Readiness: the table is reachable with this pod's credentials."""
    status = call("describe_table", TableName=table_name())["Table"]["TableStatus"]
    return {"status": "ready", "table": table_name(), "table_status": status}
