"""dpsumm.flower.tls: make_tls writes a CA and a server certificate that verify as a chain, for exactly the hosts
given, valid for the days asked, with the server key matching it and private to its owner; make_node_key writes a
P-384 key pair in OpenSSH form; bad hosts, days and names are refused naming the argument, before any file is
written."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

import pytest

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

from dpsumm.flower import make_node_key, make_tls  # noqa: E402
from dpsumm.flower.tls import MAX_DAYS  # noqa: E402
from refusal import HUGE, refused  # noqa: E402


def certificates(files):
    """The CA and server certificates make_tls wrote."""
    return (
        x509.load_pem_x509_certificate(files.ca_cert.read_bytes()),
        x509.load_pem_x509_certificate(files.server_cert.read_bytes()),
    )


def test_make_tls_writes_a_verifiable_chain(tmp_path: Path) -> None:
    files = make_tls(tmp_path, ("127.0.0.1", "example.org"))
    ca, server = certificates(files)
    ca.public_key().verify(server.signature, server.tbs_certificate_bytes, ec.ECDSA(server.signature_hash_algorithm))
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "example.org" in sans.get_values_for_type(x509.DNSName)
    private, public = make_node_key(tmp_path, "n1")
    assert public.read_text().startswith("ecdsa-sha2-nistp384 ") and oct(private.stat().st_mode & 0o777) == "0o600"


def test_the_server_certificate_names_exactly_the_hosts_given_and_is_valid_for_the_days_asked(tmp_path: Path) -> None:
    """IP addresses (v4 and v6) become IP entries and names DNS entries, nothing else; the first host is the common
    name; the CA is a CA and the server certificate is not, for server authentication only; both are valid from 5
    minutes before writing for ``days`` days; the server key is the certificate's and only its owner may read it."""
    before = dt.datetime.now(dt.timezone.utc)
    files = make_tls(tmp_path / "new" / "dir", ["superlink.example", "10.0.0.7", "::1"], days=3)
    ca, server = certificates(files)
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["superlink.example"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.7"), ipaddress.ip_address("::1")]
    assert len(sans) == 3
    cn = server.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    assert [a.value for a in cn] == ["superlink.example"] and server.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert server.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    usage = server.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    for cert in (ca, server):
        assert cert.not_valid_after_utc - cert.not_valid_before_utc == dt.timedelta(days=3, minutes=5)
        assert before - dt.timedelta(minutes=6) < cert.not_valid_before_utc <= before
    key = serialization.load_pem_private_key(files.server_key.read_bytes(), password=None)
    assert key.public_key().public_numbers() == server.public_key().public_numbers()
    assert oct(files.server_key.stat().st_mode & 0o777) == "0o600"
    assert ca.serial_number != server.serial_number


def test_a_first_host_longer_than_a_common_name_may_be_is_named_in_the_alternative_names(tmp_path: Path) -> None:
    long = ".".join(["a" * 30, "b" * 30, "example"])  # 69 characters: a valid DNS name, too long for a common name
    _, server = certificates(make_tls(tmp_path, (long,)))
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [long]
    assert [a.value for a in server.subject.get_attributes_for_oid(NameOID.COMMON_NAME)] == ["dpsumm SuperLink"]


def test_each_call_writes_new_keys(tmp_path: Path) -> None:
    a, b = make_tls(tmp_path / "a"), make_tls(tmp_path / "b")
    assert certificates(a)[0].public_key() != certificates(b)[0].public_key()
    assert a.server_key.read_bytes() != b.server_key.read_bytes()
    (pa, qa), (pb, qb) = make_node_key(tmp_path, "x"), make_node_key(tmp_path, "y")
    assert pa.read_bytes() != pb.read_bytes() and qa.read_text() != qb.read_text()


def test_make_node_key_writes_an_openssh_p384_pair_that_belongs_together(tmp_path: Path) -> None:
    private, public = make_node_key(tmp_path / "keys", "node-1")
    assert (private.name, public.name) == ("node-1.key", "node-1.key.pub")
    key = serialization.load_ssh_private_key(private.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp384r1"
    pub = serialization.load_ssh_public_key(public.read_bytes())
    assert pub.public_numbers() == key.public_key().public_numbers()


@pytest.mark.parametrize(
    "hosts",
    [(), [], "example.org", b"example.org", None, 5, ("",), ("a b",), ("bücher.example",), (None,), ("ok", 7)],
    ids=repr,
)
def test_bad_hosts_are_refused_naming_hosts_before_any_file_is_written(tmp_path: Path, hosts: object) -> None:
    """One string is refused (it used to give one host per character), as are an empty list, a host that is not a
    non-empty ASCII string without spaces (an internationalised name goes in its xn-- form)."""
    refused(lambda: make_tls(tmp_path / "out", hosts), "hosts")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "days",
    [0, -1, MAX_DAYS + 1, HUGE, 1.5, "30", True, None],
    ids=["0", "-1", "MAX_DAYS+1", "HUGE", "1.5", "'30'", "True", "None"],
)
def test_bad_days_are_refused_naming_days_before_any_file_is_written(tmp_path: Path, days: object) -> None:
    refused(lambda: make_tls(tmp_path / "out", days=days), "days")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["", "a/b", "../n", "a\x00b", None, 5])
def test_a_bad_node_key_name_is_refused_naming_name_before_any_file_is_written(tmp_path: Path, name: object) -> None:
    refused(lambda: make_node_key(tmp_path / "out", name), "name")
    assert not (tmp_path / "out").exists()
