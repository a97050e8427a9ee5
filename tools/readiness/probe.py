"""Readiness, last: a request through the whole path before any user's request takes it.

`GET https://<app_host>-<colour>.<sub-zone>/probe`: the colour's preview host name (its record only that colour's
ExternalDNS writes) resolves to the colour's ALB, whose listener presents the shared certificate, and forwards to a
pod of the sample app, which reads the DynamoDB table with its Pod Identity credentials and answers which colour
it is and which image tag it runs (app/main.py, /probe; the chart sets IMAGE_TAG from the colour's release). The
tag must be the colour's configured `image_tag`: a rollout still running shows here.

Tried a bounded number of times (the record appears a sync interval after the ALB; a rollout takes a minute), each
failure said in words: DNS not there yet, TLS, no connection, a 5xx, another colour, the wrong image.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tools.clock import Clock

if TYPE_CHECKING:
    from tools.readiness import Finding, Target

# What the sample app answers on (app/main.py, `probe`); tests/test_readiness_probe.py holds the two together.
PROBE_PATH = "/probe"
ATTEMPTS = 6
INTERVAL_SECONDS = 10.0
TIMEOUT_SECONDS = 10.0


def system_resolve(host: str, port: int) -> list[str]:
    """The addresses the machine's resolver gives for host (socket.gaierror when it has none)."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


@dataclass(frozen=True)
class Prober:
    """How the probe reaches a host: the system's resolver and trust store on port 443 unless a test says otherwise
    (a local HTTPS server with its own certificate authority)."""

    resolve: Callable[[str, int], list[str]] = system_resolve
    context: ssl.SSLContext = field(default_factory=ssl.create_default_context)
    port: int = 443
    attempts: int = ATTEMPTS
    interval_seconds: float = INTERVAL_SECONDS


class ProbeFailedError(Exception):
    """One attempt's failure, in the operator's words."""


def probe_preview(target: Target, clock: Clock, prober: Prober, *, say: Callable[[str], None]) -> Finding:
    from tools.readiness import Finding

    url = f"https://{target.preview_hostname}{PROBE_PATH}"
    failure = ""
    for attempt in range(1, prober.attempts + 1):
        try:
            answer = _ask(target.preview_hostname, prober)
            return Finding(True, f"{url}: {judge(target, answer)}")
        except ProbeFailedError as err:
            failure = str(err)
        if attempt < prober.attempts:
            say(f"  ...      {url}: {failure}; trying again in {prober.interval_seconds:.0f} s")
            clock.sleep(prober.interval_seconds)
    return Finding(False, f"{url}: {failure} (after {prober.attempts} attempts)")


def _ask(host: str, prober: Prober) -> tuple[int, bytes]:
    try:
        addresses = prober.resolve(host, prober.port)
    except (socket.gaierror, UnicodeError) as err:
        raise ProbeFailedError(
            f"DNS: {host} does not resolve ({err}); ExternalDNS writes it once the ALB is up (is external-dns Synced?), "
            "and a resolver may still remember its absence"
        ) from None
    errors = []
    for address in addresses:
        connection = _PinnedHTTPSConnection(host, address, prober)
        try:
            connection.request("GET", PROBE_PATH, headers={"Accept": "application/json", "User-Agent": "eks-bg-readiness"})
            response = connection.getresponse()
            return response.status, response.read(64 * 1024)
        except ssl.SSLCertVerificationError as err:
            raise ProbeFailedError(f"TLS: the certificate at {address} is not valid for {host} ({err.verify_message})") from None
        except ssl.SSLError as err:
            raise ProbeFailedError(f"TLS: the handshake with {address} failed ({err.reason or err})") from None
        except (OSError, http.client.HTTPException) as err:
            errors.append(f"{address}:{prober.port}: {err or type(err).__name__}")
        finally:
            connection.close()
    raise ProbeFailedError(f"no answer from {host} ({'; '.join(errors) or 'no address'})")


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to one resolved address, with the host name for SNI, the certificate check and the Host header: what
    `curl --resolve` does, so the failure names the address tried."""

    def __init__(self, host: str, address: str, prober: Prober) -> None:
        super().__init__(host, prober.port, timeout=TIMEOUT_SECONDS, context=prober.context)
        self._address, self._tls = address, prober.context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def judge(target: Target, answer: tuple[int, bytes]) -> str:
    """What an answer of the sample app proves (one line), or ProbeFailedError saying why it proves nothing."""
    status, body = answer
    text = " ".join(body.decode(errors="replace").split())[:200]
    if status >= 500:
        raise ProbeFailedError(f"HTTP {status} ({text or 'no body'}): the app or its table cannot answer")
    if status != 200:
        hint = "; an image older than /probe answers 404: build the app of this revision" if status == 404 else ""
        raise ProbeFailedError(f"HTTP {status} ({text or 'no body'}){hint}")
    try:
        got: dict[str, Any] = json.loads(body)
        colour, image_tag, table = got["colour"], got["image_tag"], got["table"]
    except (ValueError, KeyError, TypeError):
        raise ProbeFailedError(f"HTTP 200 but not the sample app's answer ({text})") from None
    if colour != target.colour:
        raise ProbeFailedError(f"answered by colour {colour}, not {target.colour}: the preview record points elsewhere")
    if image_tag != target.image_tag:
        raise ProbeFailedError(
            f"{target.colour} runs image tag {image_tag}, but its release names {target.image_tag} "
            f"(clusters.{target.colour}.image_tag or app.image_tag): a rollout may still be running"
        )
    return f"{colour} answered through DNS, its ALB and TLS; read table {table}; image {image_tag} as configured"
