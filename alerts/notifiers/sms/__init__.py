"""SMS: one GSM-7 segment out through apprise; replies carrying the code acknowledge."""

from .format import sms_text
from .gsm7 import septets, to_gsm7
from .notifier import SmsNotifier

__all__ = ["sms_text", "septets", "to_gsm7", "SmsNotifier"]
