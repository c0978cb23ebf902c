"""What the Debian package's environment leaves out (packaging/venv-omits.txt), and a check
that the program still does what those parts' neighbours do: tests/test_packaging.py runs it
in this checkout's environment with them unimportable, tests/test_deb.py in the installed one."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def venv_omits() -> dict[str, str]:
    """packaging/venv-omits.txt: a module of a locked distribution, then ``#`` and why
    packaging/build-deb.sh deletes it from the package's environment."""
    omits = {}
    for line in (REPO / "packaging" / "venv-omits.txt").read_text().splitlines():
        name, _, why = line.partition("#")
        if name.strip():
            omits[name.strip()] = why.strip()
    return omits


# Python run in the environment under test: the inbound-SMS webhook checks a Twilio signature
# (made here as Twilio makes it: HMAC-SHA1 of the URL and the sorted form fields) with
# twilio's RequestValidator, and refuses a forged reply
SMS_CHECK = """
import base64, hashlib, hmac, sys
from ms4watch.alerts.incidents.sms_auth import Scheme, SmsAuthError, WebhookVerifier
url, form = "https://ms4.example.org/sms/inbound", {"From": "+15185550100", "Body": "ACK K7Q2M"}
signed = url + "".join(k + v for k, v in sorted(form.items()))
sig = base64.b64encode(hmac.new(b"auth-token", signed.encode(), hashlib.sha1).digest()).decode()
verifier = WebhookVerifier(Scheme.TWILIO, "auth-token")
body = "&".join(f"{k}={v}" for k, v in form.items()).replace("+", "%2B").replace(" ", "+").encode()
verifier.verify(url, {"X-Twilio-Signature": sig}, body)
try:
    verifier.verify(url, {"X-Twilio-Signature": sig}, body.replace(b"K7Q2M", b"K7Q2N"))
    raise AssertionError("a forged reply passed the Twilio signature check")
except SmsAuthError:
    pass
assert "twilio.request_validator" in sys.modules
"""
