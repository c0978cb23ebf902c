"""Delivery: everything that waits on a network server after an incident changed — email,
SMS and webhook notifications, dashboard records — on threads of its own, woken when the
incident transaction commits. Ingest's writer thread only stores readings and feeds the
engine; a slow or silent server costs it nothing."""

from .records import RecordsWriter
from .worker import DeliveryWorker

__all__ = ["DeliveryWorker", "RecordsWriter"]
