"""Logging in and finding who a request is: a password (rate-limited), a session's user, an
API token. A user acts here only with a role in this server's municipality."""

from __future__ import annotations

from ...settings import WebSettings
from ..audit import AuditLog
from ..auth.users import ApiToken, User, UserStore
from ..errors import Conflict, Forbidden, NotAuthenticated, NotFound, UserError
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
        """The actor's own password: the current one is asked for again (counted as a login
        attempt). Every session of the user ends (a copied cookie with it); the id of a new
        one for this browser is returned."""
        checked = self.users.check_login(actor.username, current, address=actor.address or "unknown",
                                         limit=self.web.login_attempts, window=self.web.login_window,
                                         delay=self.web.login_delay)   # rate-limited as a login is
        if checked is None:
            self.audit.record(actor, "user.password", target=f"user:{actor.username}",
                              outcome="refused: the current password is wrong")
            raise Forbidden("the current password is wrong")
        self.users.set_password(actor.username, new)   # UserError (400) for a weak one
        self.audit.record(actor, "user.password", target=f"user:{actor.username}", detail="changed by the user")
        return self.start_session(actor)

    def tokens(self, actor: Actor) -> list[ApiToken]:
        """The actor's own API tokens (newest first)."""
        return sorted(self.users.tokens(actor.username), key=lambda t: t.id, reverse=True)

    def revoke_token(self, actor: Actor, token_id: int) -> ApiToken:
        """One of the actor's own API tokens, or (an admin here) a member's of this town."""
        owner = self.users.token_owner(token_id)
        if owner is None:
            raise NotFound(f"no token {token_id}")
        if owner.lower() != actor.username.lower():
            if self.municipality not in self.users.find(owner).roles:
                raise NotFound(f"no token {token_id}")
            self._require(actor, Permission.MANAGE_USERS, "token.revoke", f"user:{owner}")
        token = self.users.revoke_token(token_id)
        self.audit.record(actor, "token.revoke", target=f"user:{owner}", detail=f"token {token_id}: {token.label}")
        return token

    def members(self, actor: Actor) -> list[tuple[User, list[ApiToken]]]:
        """Every user with a role here, with their tokens (an admin's view)."""
        actor.require(Permission.MANAGE_USERS)
        return [(u, self.users.tokens(u.username)) for u in self.users.all() if self.municipality in u.roles]

    def remove_member(self, actor: Actor, username: str) -> User:
        """Take a user's role here away (an admin); its roles in other towns stay."""
        self._require(actor, Permission.MANAGE_USERS, "user.remove", f"user:{username}")
        try:
            user = self.users.find(username)
        except UserError as e:
            raise NotFound(str(e)) from None
        role = user.roles.get(self.municipality)
        if role is None:
            raise NotFound(f"{username} has no role in {self.municipality}")
        if user.id == actor.user_id:
            raise Conflict("an admin cannot remove itself (another admin, or `ms4watch users remove`, can)")
        user = self.users.remove(username, municipality=self.municipality)
        self.audit.record(actor, "user.remove", target=f"user:{username}", detail=role.value)
        return user

    def _require(self, actor: Actor, permission: Permission, action: str, target: str) -> None:
        """The permission, or Forbidden with the refusal in the audit log."""
        try:
            actor.require(permission)
        except Forbidden as e:
            self.audit.record(actor, action, target=target, outcome=f"refused: {e}")
            raise

    def by_token(self, secret: str, address: str | None) -> Actor | None:
        user = self.users.user_for_token(secret)
        return self.actor(user, Via.API, address) if user is not None else None

    def actor(self, user: User, via: Via, address: str | None) -> Actor:
        role = user.role_in(self.municipality)
        if role is None:
            raise Forbidden(f"{user.username} has no role in {self.municipality}")
        return Actor(user.username, user.display_name, role, self.municipality, via, address, user.id)


__all__ = ["Accounts"]
