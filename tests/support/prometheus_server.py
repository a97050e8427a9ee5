"""A real Prometheus server for the analysis tests: Debian's `prometheus` package (installed here when absent), started
as a plain process on a loopback port with a configuration that scrapes a tiny exporter the test serves (a gauge per
label set the test sets), and asked through its own HTTP API until it holds what the test set, so a test judges what
the server really answers. A module's fixture is `scraped` (one server per module: a test may stop
it, and the module's next test finds it stopped)."""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

PACKAGE = "prometheus"  # Debian's package of the server (2.42 in bookworm)
SCRAPE_SECONDS = 1  # the exporter is scraped every second: a value the test sets is in the server within a few
START_TIMEOUT_SECONDS = 60.0  # a wait, not a timing: on a loaded 2-core machine the server's start can take a while
SEEN_TIMEOUT_SECONDS = 30.0
INSTALL_TIMEOUT_SECONDS = 600.0
METRIC = "shift_error_ratio"  # the gauge the tests' exporter serves, a series per application
# How far back an instant query finds a sample (the server's default is 5 minutes): a shift judged on a fake clock asks
# for its window's end minutes ahead of the server's own clock, whose latest sample is still the one the test set then.
LOOKBACK = "1h"


def prometheus_binary() -> str:
    """The server's binary, installed from Debian's package when the machine has none (the tests run as root, as the
    Makefile's CI does); a failure says how to install it by hand, never skips."""
    found = shutil.which(PACKAGE)
    if found:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Without recommends: the node exporter would come along, and nothing here needs it.
    install = ["apt-get", "install", "-y", "--no-install-recommends", PACKAGE]
    tried = []
    for command in (install, ["apt-get", "update"], install):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, check=False)
        tried.append(f"$ {' '.join(command)} -> {done.returncode}: {done.stderr.strip()[-400:]}")
        if command is install and done.returncode == 0:
            break
    found = shutil.which(PACKAGE)
    if not found:
        pytest.fail(
            f"the Prometheus analysis tests need a real Prometheus server, Debian's `{PACKAGE}` package, and it could not "
            f"be installed (install it as root: `apt-get install -y --no-install-recommends {PACKAGE}`):\n" + "\n".join(tried)
        )
    return found


def free_port() -> int:
    """A loopback port nothing listens on now (the server is told its port, it cannot report one it chose)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Exporter:
    """An HTTP endpoint in Prometheus's text format: `<metric>{app="<app>"} <value>` per app the test sets."""

    metric: str
    values: dict[str, float] = field(default_factory=dict)
    url: str = ""

    def series(self, app: str) -> str:
        """The query of app's one series: the worst of its samples."""
        return f'max({self.metric}{{app="{app}"}})'

    def text(self) -> bytes:
        lines = [f"# TYPE {self.metric} gauge"]
        lines += [f'{self.metric}{{app="{app}"}} {_number(value)}' for app, value in sorted(self.values.items())]
        return ("\n".join(lines) + "\n").encode()


def _number(value: float) -> str:
    """A sample as the text format writes it (NaN, +Inf, -Inf spelled so)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


@contextmanager
def serving(exporter: Exporter) -> Iterator[Exporter]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = exporter.text()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            """One line per scrape otherwise."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    exporter.url = f"127.0.0.1:{server.server_address[1]}"
    try:
        yield exporter
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class PrometheusServer:
    process: subprocess.Popen[bytes]
    endpoint: str  # the API's base URL, as the configuration names it
    log: Path

    def instant(self, query: str) -> dict[str, Any]:
        """The server's own answer to an instant query now (the test's view, not the code under test's)."""
        url = f"{self.endpoint}/api/v1/query?{urlencode({'query': query})}"
        with urllib.request.urlopen(url, timeout=5) as answer:
            return dict(json.load(answer))

    def wait_for(self, query: str, value: float) -> None:
        """Until the server's latest sample of query is value (NaN matches NaN): what the next judgement will read."""
        deadline = time.monotonic() + SEEN_TIMEOUT_SECONDS
        seen: Any = None
        while time.monotonic() < deadline:
            result = self.instant(query)["data"]["result"]
            seen = [series["value"][1] for series in result]
            if len(seen) == 1 and (float(seen[0]) == value or (math.isnan(value) and math.isnan(float(seen[0])))):
                return
            time.sleep(SCRAPE_SECONDS / 2)
        raise AssertionError(f"Prometheus still answers {query} with {seen}, not {value} (log: {self.log.read_text()[-2000:]})")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@contextmanager
def prometheus(binary: str, exporter: Exporter, directory: Path) -> Iterator[PrometheusServer]:
    """The server scraping exporter, until it answers its API; stopped (if a test has not) and its data removed after."""
    config = directory / "prometheus.yml"
    config.write_text(
        "global:\n"
        f"  scrape_interval: {SCRAPE_SECONDS}s\n"
        "scrape_configs:\n"
        "  - job_name: exporter\n"
        "    static_configs:\n"
        f"      - targets: ['{exporter.url}']\n"
    )
    port = free_port()
    log = directory / "prometheus.log"
    command = [
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--query.lookback-delta={LOOKBACK}",
    ]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    server = PrometheusServer(process, f"http://127.0.0.1:{port}", log)
    try:
        _wait_ready(server)
        yield server
    finally:
        server.stop()


def _wait_ready(server: PrometheusServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"prometheus exited with {server.process.returncode}: {server.log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.endpoint}/-/ready", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"prometheus did not become ready: {server.log.read_text()[-2000:]}")


@dataclass
class Scraped:
    """A real Prometheus scraping the test's exporter: a test sets a series, then judges what the server answers."""

    exporter: Exporter
    server: PrometheusServer

    def set(self, app: str, value: float) -> None:
        """app's series at value, once the server holds it: what the next judgement reads."""
        self.exporter.values[app] = value
        self.server.wait_for(self.exporter.series(app), value)


@contextmanager
def scraped(directory: Path) -> Iterator[Scraped]:
    """An exporter of METRIC (no series until a test sets one) and the server (Debian's package, installed when absent)
    scraping it, ready; both stopped after."""
    with serving(Exporter(METRIC)) as exporter, prometheus(prometheus_binary(), exporter, directory) as server:
        yield Scraped(exporter, server)
