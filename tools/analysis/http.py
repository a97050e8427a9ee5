"""How the Prometheus and synthetic providers reach HTTP: an opener that answers with the status and the body, or raises
OSError when nothing answers. urllib by default (the standard library: no client to install for a GET); a test hands
its own."""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

TIMEOUT_SECONDS = 10.0  # per request: a source slower than this in a shift's window is as good as unreachable
MAX_BODY_BYTES = 1024 * 1024  # an answer is judged from its first MiB (a Prometheus vector of many series fits)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def text(self, limit: int = 200) -> str:
        """The body on one line, as a verdict quotes it."""
        return " ".join(self.body.decode(errors="replace").split())[:limit]


class Opener(Protocol):
    def __call__(self, url: str, *, headers: Mapping[str, str], timeout: float) -> Answer: ...


def urllib_opener(url: str, *, headers: Mapping[str, str], timeout: float) -> Answer:
    """GET url; an HTTP error status is an answer like any other (the provider judges it), no answer is OSError: a
    connection refused or reset, a timeout, TLS, and an answer that is no HTTP (http.client's errors, which are not
    OSError, said as one so that a provider catching OSError misses none)."""
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Answer(response.status, response.read(MAX_BODY_BYTES))
    except urllib.error.HTTPError as err:
        with err:
            return Answer(err.code, err.read(MAX_BODY_BYTES))
    except http.client.HTTPException as err:
        raise OSError(f"not an HTTP answer ({type(err).__name__}: {err})") from err
