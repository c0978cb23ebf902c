"""Email over SMTP: text + HTML, the episode chart and a CSV excerpt attached."""

from .message import build, message_id
from .notifier import EmailNotifier
from .url import SmtpConfig, parse_mailto

__all__ = ["build", "message_id", "EmailNotifier", "SmtpConfig", "parse_mailto"]
