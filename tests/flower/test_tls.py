"""dpsumm.flower.tls: make_tls writes a CA and server certificate that verify as a chain; node keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from dpsumm.flower import make_node_key, make_tls  # noqa: E402

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


def test_make_tls_writes_a_verifiable_chain(tmp_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec

    files = make_tls(tmp_path, ("127.0.0.1", "example.org"))
    ca = x509.load_pem_x509_certificate(files.ca_cert.read_bytes())
    server = x509.load_pem_x509_certificate(files.server_cert.read_bytes())
    ca.public_key().verify(server.signature, server.tbs_certificate_bytes, ec.ECDSA(server.signature_hash_algorithm))
    sans = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "example.org" in sans.get_values_for_type(x509.DNSName)
    private, public = make_node_key(tmp_path, "n1")
    assert public.read_text().startswith("ecdsa-sha2-nistp384 ") and oct(private.stat().st_mode & 0o777) == "0o600"
