"""Records people make on the workbench, kept in ``DATA_DIR/workbench.db`` beside the audit
log (the registry YAML stays the town's configuration):

* ``suppressions.py``: approved discharges and exempt flows with a time window and a reason,
  which the alert engine sees as it sees the registry's (``Registry.with_suppressions``);
* ``inspections.py``: construction-site inspection reports — the six items Schenectady
  ch. 148 asks for, the professional's certification, photos;
* ``photos.py``: the photos themselves, on disk under ``DATA_DIR/photos``, named by their
  SHA-256, type checked by their first bytes, size-limited;
* ``sms_received.py``: the inbound SMS webhook's posts already taken (a replay is not acted on).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .inspections import CERTIFICATION, Credential, InspectionReport, InspectionReports, ITEMS, ReportIn
    from .photos import Photo, PhotoStore
    from .sms_received import ReceivedSms
    from .suppressions import Suppression, SuppressionKind, SuppressionStore, load_suppressions, with_recorded

_HOMES = {"inspections": ("CERTIFICATION", "Credential", "InspectionReport", "InspectionReports", "ITEMS", "ReportIn"),
          "photos": ("Photo", "PhotoStore"), "sms_received": ("ReceivedSms",),
          "suppressions": ("Suppression", "SuppressionKind", "SuppressionStore", "load_suppressions", "with_recorded")}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = ["CERTIFICATION", "Credential", "InspectionReport", "InspectionReports", "ITEMS", "ReportIn", "Photo",
           "PhotoStore", "ReceivedSms", "Suppression", "SuppressionKind", "SuppressionStore", "load_suppressions", "with_recorded"]


def __getattr__(name: str) -> Any:
    """Each record's module is imported on first use: the server takes the engine's approvals
    (``suppressions``) whether or not it serves the workbench (``--http off``), without the
    inspection reports' models and the photos (a package's ``__init__`` runs before any of
    its modules)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_HOME[name]}", __name__), name)
