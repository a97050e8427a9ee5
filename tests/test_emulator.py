"""The emulator starts without racing for its port (scripts/emulator.py): the port is bound before the
server process exists and held by it, many servers start side by side, and one that dies says why at once."""

from __future__ import annotations

import errno
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from scripts.emulator import MotoProcess, OneAtATime, client

pytestmark = pytest.mark.background
REGION = "eu-west-1"
SIDE_BY_SIDE = 4  # more than any process of make test starts at once (the rehearsal: three); each costs ~1 CPU-s


def test_the_port_is_taken_before_the_server_process_serves() -> None:
    """The old way picked a free port, released it and let the server bind it later: another process could
    take it in between. Now nobody can bind the port from the moment the endpoint is known."""
    server = MotoProcess()
    try:
        with socket.socket() as intruder, pytest.raises(OSError, match="in use") as refused:
            intruder.bind(("127.0.0.1", server.port))
        assert refused.value.errno == errno.EADDRINUSE
        assert server.ready() == f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def test_many_servers_start_side_by_side_each_its_own_world() -> None:
    servers = [MotoProcess() for _ in range(SIDE_BY_SIDE)]
    try:
        with ThreadPoolExecutor(SIDE_BY_SIDE) as pool:
            endpoints = list(pool.map(lambda server: server.ready(), servers))
        assert len(set(endpoints)) == SIDE_BY_SIDE
        for number, endpoint in enumerate(endpoints):
            client("sqs", endpoint, REGION).create_queue(QueueName=f"queue-{number}")
        for number, endpoint in enumerate(endpoints):
            urls = client("sqs", endpoint, REGION).list_queues()["QueueUrls"]
            assert [url.rsplit("/", 1)[1] for url in urls] == [f"queue-{number}"]
    finally:
        for server in servers:
            server.stop()


def test_a_server_that_exits_is_reported_at_once_with_what_it_said() -> None:
    # Without the project on its module path the server process cannot even start: it exits at once.
    server = MotoProcess({"PYTHONSAFEPATH": "1", "PYTHONPATH": ""})
    try:
        with pytest.raises(RuntimeError, match=r"exited \(1\) before it served: .*No module named 'scripts'"):
            server.ready(timeout=600)
    finally:
        server.stop()


def test_requests_enter_the_backends_one_at_a_time() -> None:
    """Ten requests at once, as Terraform sends them: inside the wrapped app there is never more than one, and each
    gets its whole body."""
    inside, most = 0, 0
    counting = threading.Lock()

    def backend(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        nonlocal inside, most
        with counting:
            inside += 1
            most = max(most, inside)
        time.sleep(0.01)  # a backend walking its dicts
        with counting:
            inside -= 1
        start_response("200 OK", [])
        return [b"answer ", environ["PATH_INFO"].encode()]

    app = OneAtATime(backend)
    with ThreadPoolExecutor(10) as pool:
        bodies = list(pool.map(lambda n: b"".join(app({"PATH_INFO": f"/{n}"}, lambda *_: None)), range(10)))
    assert most == 1
    assert bodies == [f"answer /{n}".encode() for n in range(10)]
