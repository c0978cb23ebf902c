"""The notifications file (the default channel when no --notify URL is given)."""

from .notifier import FileNotifier

__all__ = ["FileNotifier"]
