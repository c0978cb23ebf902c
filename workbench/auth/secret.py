"""The key that signs session cookies and acknowledge links: ``MS4WATCH_WEB__SECRET``, else
the file ``web.secret_file`` (default ``DATA_DIR/web-secret``), created with mode 0600 on
first start when absent. Changing it logs everyone out and voids every emailed link."""

from __future__ import annotations

import os
import secrets

from ...settings import Settings, SettingsError

MIN_LENGTH = 32


def load_secret(settings: Settings) -> str:
    if settings.web.secret is not None:
        return settings.web.secret.get_secret_value()
    path = settings.web_secret_file
    try:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(secrets.token_urlsafe(48) + "\n")
        text = path.read_text(encoding="utf-8").strip()
    except FileExistsError:   # another process made it just now
        text = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise SettingsError(f"web.secret_file: cannot read or create {path}: {e.strerror}") from None
    if len(text) < MIN_LENGTH:
        raise SettingsError(f"web.secret_file: {path} holds fewer than {MIN_LENGTH} characters")
    if path.stat().st_mode & 0o077:
        raise SettingsError(f"web.secret_file: {path} is readable by others; chmod 600 it")
    return text


__all__ = ["load_secret"]
