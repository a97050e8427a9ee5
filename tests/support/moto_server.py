"""A moto server (AWS API emulator) on a loopback port, for tests whose code under test runs in other processes and
reaches AWS over HTTP: the session's (tests/conftest.py moto_endpoint) and a module's own (tests/test_shift_field.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def moto_server() -> Iterator[str]:
    """Its endpoint URL while it runs."""
    from moto.server import ThreadedMotoServer  # heavy: imported only by the tests that start one

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per API call otherwise
    # Port 0: the server binds a port the kernel chooses, so no other process can take it first.
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield f"http://{host}:{port}"
    finally:
        server.stop()
