"""Who may do what: roles per municipality, the permissions each action needs, and the
:class:`Actor` every service method is called with.

A user holds one role in each municipality it is a member of (the ``memberships`` table:
user, municipality, role). Roles are ordered; a role may do what every smaller one may.

| permission          | least role  |
|---------------------|-------------|
| read                | viewer      |
| acknowledge         | inspector   |
| record inspections  | inspector   |
| record cases        | inspector   |  (illicit-discharge cases, visits, samples, custody, lab results, releases)
| resolve             | smo         |
| enforce             | smo         |  (parties, notices of violation, stop-work orders, SWPPP reviews)
| record approvals    | smo         |  (approved discharges and exempt flows: they silence alerts)
| manage users        | admin       |
| read metrics        | admin       |  (/metrics and /health/ready's details with an API token)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .errors import Forbidden


class Role(str, enum.Enum):
    VIEWER = "viewer"
    INSPECTOR = "inspector"
    SMO = "smo"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self, other: "Role") -> bool:
        return self.rank >= other.rank


_RANK = {Role.VIEWER: 0, Role.INSPECTOR: 1, Role.SMO: 2, Role.ADMIN: 3}


class Permission(str, enum.Enum):
    READ = "read"
    ACKNOWLEDGE = "acknowledge"
    RECORD_INSPECTION = "record inspections"
    RECORD_CASE = "record cases"
    RESOLVE = "resolve"
    ENFORCE = "enforce"
    RECORD_APPROVAL = "record approvals"
    CORRECT_DATA = "correct data"
    MANAGE_USERS = "manage users"
    READ_METRICS = "read metrics"


# The one table of who may do what; a new action adds a line here.
NEEDS: dict[Permission, Role] = {
    Permission.READ: Role.VIEWER,
    Permission.ACKNOWLEDGE: Role.INSPECTOR,
    Permission.RECORD_INSPECTION: Role.INSPECTOR,
    Permission.RECORD_CASE: Role.INSPECTOR,
    Permission.RESOLVE: Role.SMO,
    Permission.ENFORCE: Role.SMO,
    Permission.RECORD_APPROVAL: Role.SMO,
    Permission.CORRECT_DATA: Role.SMO,
    Permission.MANAGE_USERS: Role.ADMIN,
    Permission.READ_METRICS: Role.ADMIN,
}


class Via(str, enum.Enum):
    """How a request reached us; recorded in both audit logs."""

    WEB = "web"             # a page, with a session cookie
    API = "api"             # /api/v1, with a token or a session
    EMAIL_LINK = "email link"
    SMS = "sms"
    TERMINAL = "terminal"   # ms4watch users …


@dataclass(frozen=True)
class Actor:
    """Who is asking: a user with its role in this municipality, how, and from where."""

    username: str
    name: str               # what the incident log shows (display name)
    role: Role
    municipality: str
    via: Via
    address: str | None = None   # the client's IP address
    user_id: int | None = None

    def may(self, permission: Permission) -> bool:
        return self.role.at_least(NEEDS[permission])

    def require(self, permission: Permission) -> None:
        if not self.may(permission):
            need = NEEDS[permission]
            raise Forbidden(f"{permission.value}: needs the role {need.value} or higher; {self.username} is "
                            f"{self.role.value} in {self.municipality}")


__all__ = ["Role", "Permission", "NEEDS", "Via", "Actor"]
