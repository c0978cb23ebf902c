"""A coalition's front door: logging in once (the users are the server's, each with a role
per municipality), choosing among the towns the user holds a role in, and the server's
health across the towns. Everything else is a town's own application."""

from __future__ import annotations

from dataclasses import dataclass

from ...settings import Settings
from ..auth.operators import Operators
from ..auth.users import User
from ..errors import Forbidden, NotAuthenticated
from ..roles import Actor, Permission, Role, Via
from . import Workbench
from .health import Check

@dataclass(frozen=True)
class Membership:
    municipality: str
    role: Role


class Lobby:
    def __init__(self, settings: Settings, towns: list[Workbench]):
        self.settings = settings
        self.towns = {t.municipality: t for t in towns}
        first = towns[0]
        self.users = first.users
        self.audit = first.audit

    def memberships(self, user: User) -> list[Membership]:
        return [Membership(m, user.roles[m]) for m in self.towns if m in user.roles]

    def login(self, username: str, password: str, *, address: str) -> tuple[User, list[Membership]]:
        web = self.settings.web
        user = self.users.check_login(username.strip(), password, address=address, limit=web.login_attempts,
                                      window=web.login_window, delay=web.login_delay)
        if user is None:
            raise NotAuthenticated("wrong user name or password")
        towns = self.memberships(user)
        if not towns:
            raise Forbidden(f"{user.username} has no role in any town this server serves")
        for t in towns:
            self.audit.record(Actor(user.username, user.display_name, t.role, t.municipality, Via.WEB, address,
                                    user.id), "session.login")
        return user, towns

    def user(self, session_id: str) -> User | None:
        """A live session's user, if enabled."""
        user_id = self.users.sessions.user_id(session_id, self.settings.web.session_max_age)
        user = self.users.get(user_id) if user_id is not None else None
        return None if user is None or user.disabled else user

    def logout(self, session_id: str, address: str) -> None:
        """End the session (every town's pages stop with it)."""
        user = self.user(session_id)
        self.users.sessions.end(session_id, "logout")
        if user is not None:
            for t in self.memberships(user):
                self.audit.record(Actor(user.username, user.display_name, t.role, t.municipality, Via.WEB, address,
                                        user.id), "session.logout")

    def operated_towns(self, address: str, bearer: str | None) -> list[str]:
        """The towns whose metrics and readiness details the asker may read: every one for
        an operator (``auth/operators.py``), those where a user's API token is admin."""
        if Operators(self.settings.web).allows(address=address, bearer=bearer):
            return list(self.towns)
        user = self.users.user_for_token(bearer) if bearer else None
        if user is None:
            return []
        return [m.municipality for m in self.memberships(user)
                if Actor(user.username, user.display_name, m.role, m.municipality, Via.API).may(Permission.READ_METRICS)]

    def checks(self) -> list[Check]:
        return [Check(f"{m}: {c.name}", c.ok, c.detail) for m, t in self.towns.items() for c in t.health.checks()]


__all__ = ["Lobby", "Membership"]
