"""``ms4watch broker-config`` without a broker: the files, their modes, what is kept, rotated
and revoked, and that no secret reaches the terminal."""

from __future__ import annotations

import base64
import re
import stat
import subprocess

import pytest
from cryptography import x509

from ms4watch.brokerconf import Auth, BrokerConfigError, generate
from ms4watch.brokerconf.passwords import password_hash
from ms4watch.contract.devices import load_devices
from ms4watch.contract.registry import load_registry
from tests.support.cli import run_cli
from tests.support.servers import have

from .support import town


def directory(tmp_path, loggers=None):
    reg, folder = town(tmp_path, loggers)
    return load_devices(load_registry(reg), folder)


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_password_hash_is_mosquittos():
    if not have("mosquitto_passwd"):
        pytest.skip("mosquitto_passwd is not installed")
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["mosquitto_passwd", "-c", "-b", f"{d}/pw", "dev", "s3cret"], check=True)
        line = open(f"{d}/pw").read().strip()
    user, theirs = line.split(":", 1)
    salt = base64.b64decode(theirs.split("$")[3])
    assert password_hash("s3cret", salt=salt) == theirs


def test_files_modes_and_one_credential_per_client(tmp_path):
    out = tmp_path / "out"
    r = generate(directory(tmp_path), out, port=18883, hosts=["localhost"])
    assert r.new_ca and r.created == ["ms4watch-ingest", "ms4watch-workbench", "LOG-1", "LOG-2"]
    secret = {"ca.key": 0o600, "revoked.json": 0o600, "passwd": 0o640, "acl": 0o640, "server.key": 0o640}
    public = {"ca.crt": 0o644, "server.crt": 0o644, "crl.pem": 0o644, "mosquitto.conf": 0o644}
    for name, m in {**secret, **public}.items():
        assert mode(out / name) == m, name
    assert mode(out / "clients") == 0o700
    for c in r.created:
        d = out / "clients" / c
        assert mode(d) == 0o700 and mode(d / "client.key") == 0o600 and mode(d / "password") == 0o600
        cert = x509.load_pem_x509_certificate((d / "client.crt").read_bytes())
        assert cert.subject.rfc4514_string() == f"CN={c}"
    passwd = (out / "passwd").read_text().splitlines()
    assert [line.split(":")[0] for line in passwd] == r.created and all("$7$101$" in line for line in passwd)
    acl = (out / "acl").read_text()
    assert "user LOG-1\ntopic write ms4/town/OF-1/LOG-1/readings\ntopic write ms4/town/OF-1/LOG-1/status\n" \
           "topic write ms4/town/OF-1/LOG-1/events\ntopic read ms4/town/OF-1/LOG-1/config\n" \
           "topic read ms4/town/OF-1/LOG-1/cmd\n" in acl
    conf = (out / "mosquitto.conf").read_text()
    for line in ("allow_anonymous false", "listener 18883", "require_certificate true", "message_size_limit 8388608",
                 "max_queued_messages 0", f"acl_file {out}/acl", f"crlfile {out}/crl.pem"):
        assert line + "\n" in conf
    # the certificate names the user; Mosquitto would not read a password (test_mosquitto.py)
    assert "use_identity_as_username true\n" in conf and "password_file" not in conf


def test_running_again_keeps_rotates_and_revokes(tmp_path):
    out = tmp_path / "out"
    generate(directory(tmp_path), out, hosts=["localhost"])
    before = {c: (out / "clients" / c / "password").read_text() for c in ("LOG-1", "LOG-2", "ms4watch-ingest")}
    serial = x509.load_pem_x509_certificate((out / "clients/LOG-2/client.crt").read_bytes()).serial_number
    ca = (out / "ca.crt").read_bytes()
    r = generate(directory(tmp_path), out, hosts=["localhost"], rotate=["ms4watch-ingest"])
    assert not r.new_ca and (out / "ca.crt").read_bytes() == ca
    assert r.rotated == ["ms4watch-ingest"] and "LOG-1" in r.kept
    assert (out / "clients/LOG-1/password").read_text() == before["LOG-1"]
    assert (out / "clients/ms4watch-ingest/password").read_text() != before["ms4watch-ingest"]
    r = generate(directory(tmp_path, {"LOG-1": "OF-1", "LOG-3": "OF-2"}), out, hosts=["localhost"])
    assert r.revoked == ["LOG-2"] and r.created == ["LOG-3"] and not (out / "clients/LOG-2").exists()
    assert "LOG-2" not in (out / "passwd").read_text() and "LOG-2" not in (out / "acl").read_text()
    crl = x509.load_pem_x509_crl((out / "crl.pem").read_bytes())
    assert crl.get_revoked_certificate_by_serial_number(serial) is not None
    assert len(list(crl)) == 2                      # LOG-2, and the ingest certificate rotated away


def test_certificate_only_takes_the_user_name_from_the_certificate(tmp_path):
    generate(directory(tmp_path), tmp_path / "out", auth=Auth.CERTIFICATE, hosts=["localhost"])
    conf = (tmp_path / "out/mosquitto.conf").read_text()
    assert "use_identity_as_username true\n" in conf and "password_file" not in conf


def test_refusals_are_one_line(tmp_path):
    with pytest.raises(BrokerConfigError, match=r"--rotate: LOG-9: not a listed device or a service"):
        generate(directory(tmp_path), tmp_path / "out", rotate=["LOG-9"])
    with pytest.raises(BrokerConfigError, match=r"device: 'ms4watch-ingest' is the name of a service"):
        generate(directory(tmp_path, {"ms4watch-ingest": "OF-1"}), tmp_path / "out2")


def test_the_command_prints_no_secret(tmp_path):
    reg, folder = town(tmp_path)
    out = tmp_path / "out"
    res = run_cli("broker-config", "--registry", str(reg), "--firmware-configs", str(folder),
                  "--out", str(out), "--host", "localhost")
    assert res.returncode == 0, res.output
    assert "new: ms4watch-ingest, ms4watch-workbench, LOG-1, LOG-2" in res.output
    for client in (out / "clients").iterdir():
        for f in ("password", "client.key"):
            secret = (client / f).read_text().strip()
            assert secret not in res.output
            for chunk in re.findall(r"[A-Za-z0-9+/]{24,}", secret):
                assert chunk not in res.output
    assert "PRIVATE KEY" not in res.output
    bad = run_cli("broker-config", "--registry", str(reg), "--out", str(out))
    assert bad.returncode == 2 and bad.output.strip().splitlines()[-1].startswith("error: --firmware-configs: not set")
    bad = run_cli("broker-config", "--registry", str(reg), "--firmware-configs", str(folder),
                  "--out", str(out), "--auth", "kerberos")
    assert bad.returncode == 2 and "--auth: expected password, certificate or both" in bad.output


def test_persistent_sessions_expire(tmp_path):
    """A persistent session nobody uses again (a test client id) queues every reading for
    ever without ``persistent_client_expiration``; the config sets it, --session-expiry
    changes it, a bad value is one line."""
    generate(directory(tmp_path), tmp_path / "out", hosts=["localhost"])
    assert "\npersistent_client_expiration 14d\n" in (tmp_path / "out" / "mosquitto.conf").read_text()
    generate(directory(tmp_path), tmp_path / "out", hosts=["localhost"], expiry="2w")
    assert "\npersistent_client_expiration 2w\n" in (tmp_path / "out" / "mosquitto.conf").read_text()
    with pytest.raises(BrokerConfigError, match=r"^--session-expiry: session expiry: expected a whole number and "
                                                 r"h, d, w, m or y \(e.g. 14d\), got '14 days'$"):
        generate(directory(tmp_path), tmp_path / "out", hosts=["localhost"], expiry="14 days")
    reg, folder = town(tmp_path)
    res = run_cli("broker-config", "--registry", str(reg), "--firmware-configs", str(folder),
                  "--out", str(tmp_path / "out"), "--host", "localhost", "--session-expiry", "30d")
    assert res.returncode == 0, res.output
    assert "\npersistent_client_expiration 30d\n" in (tmp_path / "out" / "mosquitto.conf").read_text()


def test_no_credential_for_what_nothing_uses(tmp_path):
    """``ms4watch-engine`` (written commands to every logger) was made by earlier versions but
    used by nothing: a run revokes the one an earlier run made, like an unlisted logger."""
    out = tmp_path / "out"
    generate(directory(tmp_path), out, port=18883, hosts=["localhost"])
    assert "ms4watch-engine" not in (out / "acl").read_text() + (out / "passwd").read_text()
    assert not (out / "clients" / "ms4watch-engine").exists()
    old = out / "clients" / "ms4watch-engine"          # as an earlier version left it
    old.mkdir(mode=0o700)
    (old / "password").write_text("old")
    r = generate(directory(tmp_path), out, port=18883, hosts=["localhost"])
    assert r.revoked == ["ms4watch-engine"] and not old.exists()


@pytest.mark.parametrize("auth, identity", [(Auth.BOTH, True), (Auth.CERTIFICATE, True), (Auth.PASSWORD, False)])
def test_a_certificate_names_its_user(tmp_path, auth, identity):
    """With a client certificate the broker takes its common name as the user name, so a
    logger's certificate can act only as that logger (``use_identity_as_username``)."""
    out = tmp_path / "out"
    generate(directory(tmp_path), out, auth=auth, port=18883, hosts=["localhost"])
    lines = (out / "mosquitto.conf").read_text().splitlines()
    assert ("use_identity_as_username true" in lines) is identity
    assert any(x.startswith("password_file ") for x in lines) is not identity


def test_a_town_ca_whose_key_cannot_sign_with_sha256_is_refused_in_one_line(tmp_path):
    """A town's own CA may be EC (ours) or RSA; an Ed25519 key cannot sign with SHA-256, which every
    certificate here is signed with: refused naming the key file, not a traceback at the first signature."""
    import datetime as dt

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    from cryptography.x509.oid import NameOID

    out = tmp_path / "out"
    out.mkdir()
    key = ed25519.Ed25519PrivateKey.generate()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "town CA")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, None))
    (out / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
    (out / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    with pytest.raises(BrokerConfigError, match=r"ca\.crt: cannot use the CA: .*ca\.key: a CA key must be EC or RSA"):
        generate(directory(tmp_path), out)
