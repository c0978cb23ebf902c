"""Incidents: alert episodes as things a person acknowledges and resolves, with an audit log."""

from ...sqlite import transaction
from .db import connect
from .errors import EventError, IncidentError
from .model import AuditEntry, Incident, KindPolicy, Priority, Stage, State, episode_key, policy_for
from .store import Change, IncidentStore

__all__ = ["connect", "transaction", "EventError", "IncidentError", "AuditEntry", "Incident", "KindPolicy",
           "Priority", "Stage", "State", "episode_key", "policy_for", "Change", "IncidentStore"]
