"""A local HTTPS server standing in for the colours' preview hosts (`<host>-<colour>.<sub-zone>`): TLS with a
certificate for the sub-zone's wildcard, signed by a certificate authority of its own (the probe trusts it, as a
machine trusts Amazon's), and each host answering its application's probe path as that colour's pods would: the
sample app's `/probe` (its colour, image tag and table), or any status and JSON body a test sets.

A test changes what a colour answers (its image tag, a 5xx) or where its name resolves (nowhere: DNS not there
yet), and the readiness probe (tools/readiness/probe.py) meets it as it would meet the shared load balancer.
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from model.routes import NOT_FOUND
from tests.support.tls import Authority
from tools.readiness.probe import Prober

SAMPLE_PROBE = "/probe"  # the sample app's (app/main.py, `probe`; its configuration's probe.path)


@dataclass
class Answer:
    """What one colour's pods of an application answer on their probe path: by default as the sample app on /probe;
    `body` replaces the sample app's JSON answer (another application's)."""

    colour: str
    image_tag: str
    status: int = 200
    table: str = "eks-bg-users"
    path: str = SAMPLE_PROBE
    body: dict[str, Any] | None = None


@dataclass
class PreviewServer:
    """HTTPS on a loopback port for every `*.<zone>` name; `prober()` reaches it the way the probe reaches AWS.
    address, port: where it listens (default: a port the kernel chooses on 127.0.0.1)."""

    zone: str
    address: str = "127.0.0.1"
    listen_port: int = 0
    answers: dict[str, Answer] = field(default_factory=dict)  # preview host -> its colour's answer
    unresolved: set[str] = field(default_factory=set)  # names with no record yet
    # Preview hosts whose rules do not admit this client (outside traffic.preview_cidrs): answered as the listener's
    # default action (components/shared_load_balancer.py).
    refused: set[str] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)  # Host headers seen

    def __post_init__(self) -> None:
        self.authority = Authority("readiness test CA")
        self.trust: ssl.SSLContext = self.authority.trust()
        self.server = ThreadingHTTPServer((self.address, self.listen_port), self._handler())
        server_context = self.authority.server_context(names=[self.zone, f"*.{self.zone}"])
        self.server.socket = server_context.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def prober(self, *, attempts: int = 3, trust: ssl.SSLContext | None = None) -> Prober:
        return Prober(resolve=self._resolve, context=trust or self.trust, port=self.port, attempts=attempts, interval_seconds=5)

    def _resolve(self, host: str, port: int) -> list[str]:
        if host in self.unresolved or not host.endswith(f".{self.zone}"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return ["127.0.0.1"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        preview = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                host = (self.headers["Host"] or "").split(":")[0]
                preview.requests.append(host)
                answer = preview.answers.get(host)
                if host in preview.refused:
                    self._send_text(404, NOT_FOUND)
                elif answer is None or self.path != answer.path:
                    self._send(404, {"detail": "Not Found"})
                elif answer.status != 200:
                    self._send(answer.status, {"error": "DynamoDB describe_table failed: AccessDeniedException"})
                elif answer.body is not None:
                    self._send(200, answer.body)
                else:
                    body = {"colour": answer.colour, "image_tag": answer.image_tag, "table": answer.table}
                    self._send(200, {**body, "table_status": "ACTIVE", "items_read": 1})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                self._send_text(status, json.dumps(body), "application/json")

            def _send_text(self, status: int, text: str, content_type: str = "text/plain") -> None:
                payload = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def serving_green(zone: str) -> PreviewServer:
    """green's preview hosts of the emulated world's three applications (tests/support/emulated_aws.py APPS), answering
    each one's readiness probe as green's pods do (orders: its release); the caller closes it."""
    answers = {
        f"app-green.{zone}": Answer("green", "0.1.0"),
        f"catalogue-green.{zone}": Answer("green", "", path="/health", body={"status": "ok"}),
        f"orders-green.{zone}": Answer("green", "", path="/status", body={"colour": "green", "release": "4.2.1"}),
    }
    return PreviewServer(zone, answers=answers)
