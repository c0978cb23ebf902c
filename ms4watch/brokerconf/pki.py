"""The broker's own certificate authority (``cryptography``): a CA, the broker's server
certificate, one client certificate per device and service, and the revocation list.

Keys are ECDSA P-256 (small for a logger, fast on a TLS handshake). The CA lives ten
years, the broker's and clients' certificates ``validity`` (two years by default); a client
certificate's common name is its MQTT user name (Mosquitto's ``use_identity_as_username``).
The CRL is signed anew at every run, valid ``CRL_DAYS``; Mosquitto refuses every
connection once it has expired, so ``broker-config`` must run before then (docs/operations.md).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
CRL_DAYS = 3650


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass(frozen=True)
class CA:
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey  # ours are EC; a town's own RSA CA works too
    cert: x509.Certificate

    @classmethod
    def create(cls, name: str) -> "CA":
        key = new_key()
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = _now()
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=CA_DAYS))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return cls(key, cert)

    @classmethod
    def load(cls, cert_file: Path, key_file: Path) -> "CA":
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
            raise ValueError(f"{key_file}: a CA key must be EC or RSA (it signs with SHA-256), not {type(key).__name__}")
        spki = serialization.PublicFormat.SubjectPublicKeyInfo
        if (key.public_key().public_bytes(serialization.Encoding.DER, spki)
                != cert.public_key().public_bytes(serialization.Encoding.DER, spki)):
            raise ValueError(f"{key_file} is not the key of {cert_file}")
        return cls(key, cert)

    def issue(self, common_name: str, *, server_names: Iterable[str] = (), days: int = 730,
              key: ec.EllipticCurvePrivateKey | None = None) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
        """A new key and its certificate: a server's when ``server_names`` (DNS names or IP
        addresses) are given, else a client's."""
        key = key or new_key()
        now = _now()
        server_names = list(server_names)
        b = (x509.CertificateBuilder()
             .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
             .issuer_name(self.cert.subject).public_key(key.public_key())
             .serial_number(x509.random_serial_number())
             .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=days))
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
             .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()), critical=False)
             .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server_names
                                                   else ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False))
        if server_names:
            b = b.add_extension(x509.SubjectAlternativeName([_general_name(n) for n in server_names]), critical=False)
        return key, b.sign(self.key, hashes.SHA256())

    def crl(self, revoked: Iterable[int]) -> x509.CertificateRevocationList:
        now = _now()
        b = (x509.CertificateRevocationListBuilder().issuer_name(self.cert.subject)
             .last_update(now - dt.timedelta(minutes=5)).next_update(now + dt.timedelta(days=CRL_DAYS)))
        for serial in sorted(set(revoked)):
            b = b.add_revoked_certificate(x509.RevokedCertificateBuilder().serial_number(serial)
                                          .revocation_date(now).build())
        return b.sign(self.key, hashes.SHA256())

    def signed(self, cert: x509.Certificate) -> bool:
        """Whether ``cert`` was issued by this CA (and is still within its dates)."""
        try:
            cert.verify_directly_issued_by(self.cert)
        except (ValueError, TypeError, InvalidSignature):
            return False
        now = _now()
        return cert.not_valid_before_utc <= now < cert.not_valid_after_utc


def _general_name(name: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(name))
    except ValueError:
        return x509.DNSName(name)


__all__ = ["CA", "new_key", "key_pem", "cert_pem", "CA_DAYS", "CRL_DAYS"]
