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

from .inspections import CERTIFICATION, Credential, InspectionReport, InspectionReports, ITEMS, ReportIn
from .photos import Photo, PhotoStore
from .sms_received import ReceivedSms
from .suppressions import Suppression, SuppressionKind, SuppressionStore, load_suppressions, with_recorded

__all__ = ["CERTIFICATION", "Credential", "InspectionReport", "InspectionReports", "ITEMS", "ReportIn", "Photo",
           "PhotoStore", "ReceivedSms", "Suppression", "SuppressionKind", "SuppressionStore", "load_suppressions", "with_recorded"]
