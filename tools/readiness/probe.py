"""Readiness, last: for each application, a request through the whole path before any user's request takes it.

`GET https://<host>-<colour>.<sub-zone><probe.path>`: the colour's preview host name of the application (a record of
the traffic stack) resolves to the shared load balancer, whose listener presents the shared certificate and whose
preview rule forwards to that colour's target group only, whatever the weights; a pod of the application answers.
The answer must have the application's `probe.status` and hold the fields of its `probe.expect_json` (`{colour}` and
`{image_tag}` filled with the colour's): the sample app's /probe reads DynamoDB with its Pod Identity credentials and
answers its colour and image tag (app/main.py), so a pod of another colour, or a rollout still running, shows here.

Tried a bounded number of times (a rollout takes a minute), each failure said in words: DNS, TLS, no connection, a 5xx,
another status, another colour, another release.

The preview rules admit only the networks of `traffic.preview_cidrs` (default: `eks.public_access_cidrs`;
model/preview_access.py), so readiness runs from there: the operators' or CI's networks. From elsewhere no rule takes
the request and the load balancer answers its own 404 (model/routes.NOT_FOUND), which the probe names as such.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model.preview_access import FALLBACK_KEY, KEY
from model.routes import NOT_FOUND
from tools.clock import Clock
from tools.readiness.types import Finding, Probed, Target

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


def probe_preview(target: Target, app: Probed, clock: Clock, prober: Prober, *, say: Callable[[str], None]) -> Finding:
    url = f"https://{app.preview_hostname}{app.probe.path}"
    failure = ""
    for attempt in range(1, prober.attempts + 1):
        try:
            answer = _ask(app.preview_hostname, app.probe.path, prober)
            return Finding(True, f"{url}: {judge(target, app, answer)}")
        except ProbeFailedError as err:
            failure = str(err)
        if attempt < prober.attempts:
            say(f"  ...      {url}: {failure}; trying again in {prober.interval_seconds:.0f} s")
            clock.sleep(prober.interval_seconds)
    return Finding(False, f"{url}: {failure} (after {prober.attempts} attempts)")


def _ask(host: str, path: str, prober: Prober) -> tuple[int, bytes]:
    try:
        addresses = prober.resolve(host, prober.port)
    except (socket.gaierror, UnicodeError) as err:
        raise ProbeFailedError(
            f"DNS: {host} does not resolve ({err}); the traffic stack writes it (cdktf deploy traffic), and a resolver "
            "may still remember its absence"
        ) from None
    errors = []
    for address in addresses:
        connection = _PinnedHTTPSConnection(host, address, prober)
        try:
            connection.request("GET", path, headers={"Accept": "application/json", "User-Agent": "eks-bg-readiness"})
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


def judge(target: Target, app: Probed, answer: tuple[int, bytes]) -> str:
    """What an answer proves (one line), or ProbeFailedError saying why it proves nothing."""
    status, body = answer
    text = " ".join(body.decode(errors="replace").split())[:200]
    if status >= 500:
        raise ProbeFailedError(f"HTTP {status} ({text or 'no body'}): {app.name} cannot answer")
    if status == 404 and text == NOT_FOUND:
        raise ProbeFailedError(
            f"HTTP 404 {NOT_FOUND!r}, the shared load balancer's own answer: no rule of {app.preview_hostname} takes "
            f"this request. The preview hosts answer only the networks of {KEY} (unset: {FALLBACK_KEY}): run readiness "
            f"from one of them, or add this machine's egress network there and `cdktf deploy traffic`; or the traffic "
            "stack has no rule for this host yet (`cdktf deploy traffic`)"
        )
    if status != app.probe.status:
        hint = f"; an image without {app.probe.path} answers 404: build {app.name} of this revision" if status == 404 else ""
        raise ProbeFailedError(f"HTTP {status}, not {app.probe.status} (applications.{app.name}.probe.status): {text}{hint}")
    expected = app.expected(target.colour)
    if not expected:
        return f"{target.colour} answered {status} through DNS, the shared load balancer and TLS"
    try:
        got: dict[str, Any] = json.loads(body)
        seen = {field: str(got[field]) for field in expected}
    except (ValueError, KeyError, TypeError):
        fields = ", ".join(expected)
        raise ProbeFailedError(
            f"HTTP {status} but not a JSON answer with {fields} (applications.{app.name}.probe): {text}"
        ) from None
    if "colour" in expected and seen["colour"] != expected["colour"]:
        raise ProbeFailedError(f"answered by colour {seen['colour']}, not {target.colour}: the preview route points elsewhere")
    if wrong := {field: value for field, value in seen.items() if value != expected[field]}:
        said = ", ".join(f"{field} {value!r} (expected {expected[field]!r})" for field, value in wrong.items())
        tag = f"; {target.colour} names image tag {app.image_tag}: a rollout may still be running" if app.image_tag else ""
        raise ProbeFailedError(f"{target.colour} answered {said}{tag}")
    shown = ", ".join(f"{field} {value}" for field, value in seen.items())
    return f"{target.colour} answered through DNS, the shared load balancer and TLS: {shown}, as configured"
