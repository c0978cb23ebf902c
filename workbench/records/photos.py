"""Inspection photos on disk: ``DATA_DIR/photos/ab/abcdef…`` named by the SHA-256 of their
bytes (the same photo twice is one file; a name cannot be guessed from anything but the
photo itself), each at most ``web.photo_max_bytes``, written atomically, never changed.

Only images a browser shows and phones take are taken, recognised by their first bytes
(never by the file name or the type the browser claims): JPEG, PNG, WebP, HEIC/HEIF. SVG
is not an image here (it can carry script). Photos are served only through the report
that lists them, to a user with a role in the report's town.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import NotFound, WorkbenchError

SHA256 = re.compile(r"^[0-9a-f]{64}$")
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs", b"mif1", b"msf1"}


class PhotoRefused(WorkbenchError):
    """Not an image we take, or too big (the message says which, and the file's name)."""

    status = 400


class PhotoTooLarge(PhotoRefused):
    status = 413


def media_type(data: bytes) -> str | None:
    """The image type its first bytes say, or None."""
    if data[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS:
        return "image/heic"
    return None


@dataclass(frozen=True)
class Photo:
    sha256: str
    media_type: str
    size: int
    name: str = ""

    @property
    def shown_inline(self) -> bool:
        """Browsers draw these (HEIC is offered as a download)."""
        return self.media_type in ("image/jpeg", "image/png", "image/webp")


class PhotoStore:
    def __init__(self, root: Path, max_bytes: int):
        self.root = Path(root)
        self.max_bytes = max_bytes

    def check(self, data: bytes, name: str = "") -> Photo:
        """The photo's identity if we take it; PhotoRefused / PhotoTooLarge otherwise."""
        what = f"photo {name!r}" if name else "photo"
        if not data:
            raise PhotoRefused(f"{what} is empty")
        if len(data) > self.max_bytes:
            raise PhotoTooLarge(f"{what} is {len(data) / 1e6:.1f} MB, more than the {self.max_bytes / 1e6:g} MB "
                                "a photo may be (web.photo_max_bytes)")
        kind = media_type(data)
        if kind is None:
            raise PhotoRefused(f"{what} is not a JPEG, PNG, WebP or HEIC image")
        return Photo(hashlib.sha256(data).hexdigest(), kind, len(data), _clean(name))

    def put(self, data: bytes, name: str = "") -> Photo:
        photo = self.check(data, name)
        path = self.path(photo.sha256)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        return photo

    def read(self, sha256: str) -> bytes:
        if not SHA256.match(sha256):
            raise NotFound("no such photo")
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError:
            raise NotFound("the photo's file is missing from DATA_DIR/photos") from None

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256


def _clean(name: str) -> str:
    """A file name to show (never used as a path)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c for c in base if c.isprintable())[:120]


__all__ = ["Photo", "PhotoStore", "PhotoRefused", "PhotoTooLarge", "media_type", "SHA256"]
