"""Signed, expiring acknowledge links: ``{base}/ack/<token>``, the token an itsdangerous
signature over the incident id and the time it was made. Whoever holds an unexpired link
may acknowledge that one incident (it went to the incident's recipients); the page asks
for a name and a button press, so a mail scanner following the link changes nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from ..errors import LinkExpired, NotFound

if TYPE_CHECKING:
    from ...alerts.incidents import Incident

SALT = "ms4watch.ack-link"


class AckLinks:
    def __init__(self, secret: str, lifetime: timedelta, base_url: str | None = None, *, scope: str | None = None):
        """``base_url``: where recipients reach the workbench (``http.public_url``); the web
        server fills it in with its listening address when it is not set. ``scope``: the
        municipality, on a coalition's server — a link signed for one town's incident is
        no link at all on another's (its incident ids are that town's own)."""
        self._signer = URLSafeTimedSerializer(secret, salt=SALT if scope is None else f"{SALT}/{scope}")
        self.lifetime = lifetime
        self.base_url = base_url.rstrip("/") if base_url else None

    def token(self, incident_id: int) -> str:
        return self._signer.dumps({"incident": incident_id})

    def url(self, incident: "Incident") -> str:
        """The Dispatcher's ``ack_link``."""
        return f"{self.base_url or ''}/ack/{self.token(incident.id)}"

    def incident_id(self, token: str) -> int:
        """The incident a token names; LinkExpired past its lifetime, NotFound if forged."""
        try:
            data = self._signer.loads(token, max_age=int(self.lifetime.total_seconds()))
        except SignatureExpired:
            raise LinkExpired(f"this acknowledge link expired (links work for {_days(self.lifetime)}); "
                              "log in to acknowledge") from None
        except BadSignature:
            raise NotFound("no such acknowledge link (it may have been cut short, or the server's secret "
                           "changed)") from None
        iid = data.get("incident") if isinstance(data, dict) else None
        if not isinstance(iid, int):
            raise NotFound("no such acknowledge link")
        return iid


def _days(td: timedelta) -> str:
    hours = td.total_seconds() / 3600
    return f"{hours / 24:g} days" if hours >= 24 else f"{hours:g} hours"


__all__ = ["AckLinks"]
