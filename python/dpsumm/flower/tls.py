"""TLS certificates and SuperNode keys for a Flower federation (for tests and trials).

In production, use certificates from your organisation's CA. These helpers write what Flower 1.41
expects:

* :func:`make_tls`: a CA certificate (``ca.crt``: give it to every SuperNode, ``--root-certificates``,
  and to the ``flwr`` CLI, ``root-certificates`` in its connection) and the SuperLink's certificate and
  key (``server.pem``, ``server.key``: ``flower-superlink --ssl-ca-certfile ca.crt --ssl-certfile
  server.pem --ssl-keyfile server.key``), valid for the given host names and IP addresses.
* :func:`make_node_key`: a SuperNode's EC P-384 key pair in OpenSSH format. The private key stays on the
  SuperNode (``--auth-supernode-private-key``); the public key is registered at the SuperLink with
  ``flwr supernode register KEY.pub CONNECTION --name NAME``, and the SuperLink (started with
  ``--enable-supernode-auth``) then refuses every node whose key is not registered.
"""

from __future__ import annotations

import datetime as _dt
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .._validation import bounded_int
from ..errors import InvalidParameterError

__all__ = ["TlsFiles", "make_tls", "make_node_key"]

#: The longest validity :func:`make_tls` writes (days; 100 years).
MAX_DAYS = 36500
#: The longest common name of a certificate's subject (RFC 5280, ub-common-name); a longer first host is named in
#: the subject alternative names only (the common name is then "dpsumm SuperLink").
MAX_COMMON_NAME = 64


@dataclass(frozen=True)
class TlsFiles:
    """Paths written by :func:`make_tls`."""

    ca_cert: Path
    server_cert: Path
    server_key: Path


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    path.chmod(0o600)


def make_tls(directory: str | Path, hosts: Sequence[str] = ("127.0.0.1", "localhost"), *, days: int = 30) -> TlsFiles:
    """Write a CA and a SuperLink certificate signed by it to ``directory``.

    Parameters
    ----------
    directory : str or Path
        Created if missing.
    hosts : sequence of str
        Host names (ASCII: an internationalised name in its ``xn--`` form) and IP addresses the SuperLink is
        reached at (subject alternative names); the first is also the certificate's common name.
    days : int
        Validity, from 1 to ``MAX_DAYS``.
    """
    if isinstance(hosts, (str, bytes)) or not isinstance(hosts, Sequence):
        raise InvalidParameterError(
            f"`hosts` must be a list or tuple of host names and IP addresses, got {hosts!r:.80} (one host: ('name',))",
            "hosts",
        )
    if not hosts:
        raise InvalidParameterError("`hosts` must name at least one host or IP address", "hosts")
    for h in hosts:
        if not isinstance(h, str) or not h or not h.isascii() or any(c.isspace() for c in h):
            raise InvalidParameterError(
                f"`hosts` must hold non-empty ASCII host names or IP addresses without spaces, got {h!r:.80}", "hosts"
            )
    days = bounded_int(days, "days", 1, MAX_DAYS)
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP384R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dpsumm test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    sans: list[x509.GeneralName] = []
    for h in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    server_key = ec.generate_private_key(ec.SECP384R1())
    common_name = hosts[0] if len(hosts[0]) <= MAX_COMMON_NAME else "dpsumm SuperLink"
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _dt.timedelta(minutes=5))
        .not_valid_after(now + _dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    files = TlsFiles(d / "ca.crt", d / "server.pem", d / "server.key")
    files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.server_cert.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    _write_key(server_key, files.server_key)
    return files


def make_node_key(directory: str | Path, name: str) -> tuple[Path, Path]:
    """Write ``NAME.key`` (OpenSSH EC P-384 private key) and ``NAME.key.pub`` to ``directory``.

    Returns
    -------
    (Path, Path)
        The private and public key files.
    """
    if not isinstance(name, str) or not name or "/" in name or "\x00" in name:
        raise InvalidParameterError(f"`name` must be a plain file name, got {name!r}", "name")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP384R1())
    private, public = d / f"{name}.key", d / f"{name}.key.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    private.chmod(0o600)
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    return private, public
