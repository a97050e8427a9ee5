"""A TLS listener on a loopback port standing in for a cluster's Kubernetes API endpoint: it completes each handshake
with a certificate for `localhost` signed by a certificate authority of its own (what DescribeCluster's
`certificateAuthority` names for a real cluster), then hangs up. Enough for scripts/ci/reach_cluster.py, which only
asks whether a TLS session can be had."""

from __future__ import annotations

import base64
import socket
import threading

from tests.support.tls import Authority

HOST = "localhost"


class TlsListener:
    def __init__(self) -> None:
        authority = Authority("cluster test CA")
        self.context = authority.server_context(names=[HOST])
        # base64 of the PEM, as DescribeCluster's certificateAuthority.data holds it.
        self.authority = base64.b64encode(authority.pem.encode()).decode()
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.handshakes = 0
        self._counted = threading.Condition()
        threading.Thread(target=self._serve, daemon=True).start()

    def handshakes_reach(self, count: int, timeout: float = 30) -> int:
        """The handshakes completed, once they reach count (the server's side ends after the client's: TLS 1.3) or the
        timeout passes."""
        with self._counted:
            self._counted.wait_for(lambda: self.handshakes >= count, timeout)
            return self.handshakes

    @property
    def url(self) -> str:
        return f"https://{HOST}:{self.socket.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:  # closed
                return
            connection.settimeout(5)
            try:
                with self.context.wrap_socket(connection, server_side=True), self._counted:
                    self.handshakes += 1
                    self._counted.notify_all()
            except OSError:  # the client gave up, or distrusted the certificate
                connection.close()

    def close(self) -> None:
        self.socket.close()


def closed_port() -> int:
    """A loopback port nobody listens on: bound by the kernel's choice, then released."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port: int = probe.getsockname()[1]
    return port
