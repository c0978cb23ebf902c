"""Logging in and finding who a request is: a password (rate-limited), a session's user, an
API token. A user acts here only with a role in this server's municipality."""

from __future__ import annotations

from ...settings import WebSettings
from ..audit import AuditLog
from ..auth.users import User, UserStore
from ..errors import Forbidden, NotAuthenticated, NotFound
from ..roles import Actor, Permission, Via


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
                                      window=self.web.login_window, delay=self.web.login_delay)
        if user is None:
            raise NotAuthenticated("wrong user name or password")
        actor = self.actor(user, Via.WEB, address)
        self.audit.record(actor, "session.login")
        return actor

    def start_session(self, actor: Actor) -> str:
        """A server-side session for the actor; its id goes into the signed cookie."""
        assert actor.user_id is not None
        return self.users.sessions.start(actor.user_id)

    def logout(self, actor: Actor, session_id: str) -> None:
        self.users.sessions.end(session_id, "logout")
        self.audit.record(actor, "session.logout")

    def by_session(self, session_id: str, via: Via, address: str | None) -> Actor | None:
        """A live session's user (not ended, not older than ``web.session_max_age``), if
        still enabled and a member here."""
        user_id = self.users.sessions.user_id(session_id, self.web.session_max_age)
        return self.by_id(user_id, via, address) if user_id is not None else None

    def by_id(self, user_id: int, via: Via, address: str | None) -> Actor | None:
        """A user, if still enabled and a member here."""
        user = self.users.get(user_id)
        if user is None or user.disabled:
            return None
        return self.actor(user, via, address)

    def change_password(self, actor: Actor, current: str, new: str) -> str:
        """The actor's own password: the current one is asked for again. Every session of
        the user ends (a copied cookie with it); the id of a new one for this browser is
        returned."""
        if not self.users.check_password(actor.username, current):
            raise Forbidden("the current password is wrong")
        self.users.set_password(actor.username, new)
        self.audit.record(actor, "user.password", target=f"user:{actor.username}", detail="changed by the user")
        return self.start_session(actor)

    def revoke_token(self, actor: Actor, token_id: int) -> None:
        """One of the actor's own API tokens, or (an admin) anyone's who holds a role here."""
        owner = self.users.token_owner(token_id)
        if owner is None:
            raise NotFound(f"no token {token_id}")
        if owner.lower() != actor.username.lower():
            actor.require(Permission.MANAGE_USERS)
            if self.municipality not in self.users.find(owner).roles:
                raise NotFound(f"no token {token_id}")
        self.users.revoke_token(token_id)
        self.audit.record(actor, "token.revoke", target=f"user:{owner}", detail=f"token {token_id}")

    def by_token(self, secret: str, address: str | None) -> Actor | None:
        user = self.users.user_for_token(secret)
        return self.actor(user, Via.API, address) if user is not None else None

    def actor(self, user: User, via: Via, address: str | None) -> Actor:
        role = user.role_in(self.municipality)
        if role is None:
            raise Forbidden(f"{user.username} has no role in {self.municipality}")
        return Actor(user.username, user.display_name, role, self.municipality, via, address, user.id)


__all__ = ["Accounts"]
