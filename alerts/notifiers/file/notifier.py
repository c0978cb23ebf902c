"""The notifications file: used when no ``--notify`` URL is given (``file:///path`` names
it). Each notification is appended to a plain-text file a person can read (and printed),
so nothing is silent."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Protocol

from ..base import Notification, PermanentError, RetryableError
from ..text import plain_text

RULE = "=" * 72


class EntryStream(Protocol):
    """Where entries are echoed: a text stream (stdout), or the server's one-line echo."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class FileNotifier:
    channel = "file"

    def __init__(self, path: str | Path, stream: EntryStream | None = None):
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise ValueError(f"notifications file {self.path} is a directory")
        self.stream: EntryStream = stream if stream is not None else sys.stdout

    def format(self, n: Notification) -> str:
        head = f"{RULE}\n[{n.created_at}] {n.stage.upper()} #{(n.incident or {}).get('id', '-')}  key {n.key}\n"
        if n.routed_to:
            head += "To: " + ", ".join(n.routed_to) + "\n"
        else:
            head += "To: (no contact in the registry routes this; kept here)\n"
        return head + plain_text(n)

    def send(self, notification: Notification) -> None:
        entry = self.format(notification)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(entry)
                f.flush()
                os.fsync(f.fileno())
        except PermissionError as e:
            raise PermanentError(f"notifications file {self.path}: {e.strerror}") from None
        except OSError as e:
            raise RetryableError(f"notifications file {self.path}: {e.strerror}") from None
        try:
            self.stream.write(entry)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # the file has it; a closed terminal must not turn into a resend
