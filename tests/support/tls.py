"""A certificate authority of a test's own, and what it signs: the certificates of the local HTTPS servers that stand
in for AWS's (the colours' preview hosts behind the shared load balancer, each cluster's Kubernetes API), and the trust
a client of theirs needs, as a context or as a PEM (what EKS hands out as a cluster's certificate authority)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


class Authority:
    """A self-signed certificate authority, valid for a day from five minutes ago."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._key = ec.generate_private_key(ec.SECP256R1())
        certificate = (
            self._builder(_name(name), self._key.public_key())
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.pem = certificate.public_bytes(serialization.Encoding.PEM).decode()

    def trust(self) -> ssl.SSLContext:
        """A client's context that trusts this authority only (hostnames checked)."""
        return ssl.create_default_context(cadata=self.pem)

    def server_context(self, *, names: Sequence[str] = (), addresses: Sequence[str] = ()) -> ssl.SSLContext:
        """A server's context with a certificate this authority signed for these DNS names and IP addresses."""
        key = ec.generate_private_key(ec.SECP256R1())
        subject = [*(x509.DNSName(n) for n in names), *(x509.IPAddress(ipaddress.ip_address(a)) for a in addresses)]
        leaf = (
            self._builder(_name((list(names) or list(addresses))[0]), key.public_key())
            .add_extension(x509.SubjectAlternativeName(subject), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        with tempfile.TemporaryDirectory() as scratch:  # the ssl module loads a chain from files only
            chain, private = Path(scratch, "chain.pem"), Path(scratch, "key.pem")
            chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
            private.write_bytes(
                key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
            )
            context.load_cert_chain(chain, private)
        return context

    def _builder(self, subject: x509.Name, public_key: ec.EllipticCurvePublicKey) -> x509.CertificateBuilder:
        now = dt.datetime.now(dt.UTC)
        return (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(_name(self.name))
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
        )
