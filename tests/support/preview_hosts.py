"""The colours' preview hosts for a command that runs in a process of its own (`python -m tools.readiness <colour>`,
`python -m tools.shift --to <colour>`): the readiness probe (tools/readiness/probe.py, its default `Prober`) resolves a
preview host with the machine's resolver, connects to port 443 and trusts the machine's certificate authorities. No
product code changes for it; three things of the process's world do:

- the trust store: `SSL_CERT_FILE` names a bundle holding the preview server's authority (OpenSSL's default verify
  paths read it, and `ssl.create_default_context()` loads them: Python docs, ssl `set_default_verify_paths`);
- the names: the command runs in a mount namespace of its own (util-linux `unshare --mount`, whose default propagation
  is private) in which a hosts file of this test's is bind-mounted over /etc/hosts (glibc reads `files` first,
  /etc/nsswitch.conf), naming each preview host at the server's address; nothing outside that process sees it. As
  root (this machine) the namespace needs nothing more; otherwise an unprivileged user namespace maps the user to
  root in it (`--user --map-root-user`), which the kernel must allow;
- the port: the server listens on 443 of a loopback address of its own (127.0.0.0/8 is loopback on Linux, so tests
  side by side each take one), which needs root or CAP_NET_BIND_SERVICE (or net.ipv4.ip_unprivileged_port_start at
  443 or below).

Without those privileges the seam to ask of the product is the probe's target: e.g. `Prober` read from the environment
(a `--resolve`-style `host:port:address` and a CA bundle) when the command builds its default.
"""

from __future__ import annotations

import errno
import os
import random
from dataclasses import dataclass
from pathlib import Path

from tests.support.preview_server import PreviewServer

HTTPS_PORT = 443  # where the probe connects (tools/readiness/probe.py `Prober.port`)
TRUST = "SSL_CERT_FILE"


@dataclass
class PreviewHosts:
    """A preview server on port 443 of a loopback address of its own, and how a command in another process reaches it."""

    server: PreviewServer
    directory: Path  # where the hosts file and the trust bundle are written

    @classmethod
    def start(cls, zone: str, directory: Path) -> PreviewHosts:
        """On the first free 127.x.y.z:443 of a few tried at random."""
        directory.mkdir(parents=True, exist_ok=True)
        chosen = random.Random()
        for _ in range(20):
            address = f"127.{chosen.randint(1, 254)}.{chosen.randint(1, 254)}.{chosen.randint(2, 254)}"
            try:
                server = PreviewServer(zone, address=address, listen_port=HTTPS_PORT)
            except OSError as err:
                if err.errno != errno.EADDRINUSE:
                    raise
                continue
            (directory / "trust.pem").write_text(server.authority.pem)
            return cls(server, directory)
        raise RuntimeError(f"no free loopback address with port {HTTPS_PORT} in 20 tries")

    def environment(self) -> dict[str, str]:
        return {TRUST: str(self.directory / "trust.pem")}

    def command(self, *command: str) -> list[str]:
        """command, run where each host the server answers for resolves to it (and every other name as before)."""
        hosts = self.directory / "hosts"
        base = Path("/etc/hosts").read_text() if Path("/etc/hosts").is_file() else ""
        named = "".join(f"{self.server.address} {host}\n" for host in sorted(self.server.answers))
        hosts.write_text(f"{base.rstrip()}\n{named}")
        privileged = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        bind = 'mount --bind "$0" /etc/hosts && exec "$@"'
        return ["unshare", "--mount", *privileged, "--", "sh", "-c", bind, str(hosts), *command]

    def close(self) -> None:
        self.server.close()
