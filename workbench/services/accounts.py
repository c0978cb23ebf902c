"""Logging in and finding who a request is: a password (rate-limited), a session's user, an
API token. A user acts here only with a role in this server's municipality."""

from __future__ import annotations

from ...settings import WebSettings
from ..audit import AuditLog
from ..auth.users import User, UserStore
from ..errors import Forbidden, NotAuthenticated
from ..roles import Actor, Via


class Accounts:
    def __init__(self, users: UserStore, audit: AuditLog, municipality: str, web: WebSettings):
        self.users = users
        self.audit = audit
        self.municipality = municipality
        self.web = web

    def login(self, username: str, password: str, *, address: str) -> Actor:
        """The actor for a correct password of an enabled member; NotAuthenticated (one
        message for every cause), RateLimited after too many failures."""
        user = self.users.check_login(username.strip(), password, address=address, limit=self.web.login_attempts,
                                      window=self.web.login_window)
        if user is None:
            raise NotAuthenticated("wrong user name or password")
        actor = self.actor(user, Via.WEB, address)
        self.audit.record(actor, "session.login")
        return actor

    def logout(self, actor: Actor) -> None:
        self.audit.record(actor, "session.logout")

    def by_id(self, user_id: int, via: Via, address: str | None) -> Actor | None:
        """A session's user, if still enabled and a member here."""
        user = self.users.get(user_id)
        if user is None or user.disabled:
            return None
        return self.actor(user, via, address)

    def by_token(self, secret: str, address: str | None) -> Actor | None:
        user = self.users.user_for_token(secret)
        return self.actor(user, Via.API, address) if user is not None else None

    def actor(self, user: User, via: Via, address: str | None) -> Actor:
        role = user.role_in(self.municipality)
        if role is None:
            raise Forbidden(f"{user.username} has no role in {self.municipality}")
        return Actor(user.username, user.display_name, role, self.municipality, via, address, user.id)


__all__ = ["Accounts"]
