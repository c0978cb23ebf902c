"""GSM 03.38 (GSM-7): what fits in one SMS segment of 160 septets.

Characters of the extension table (``^{}\\[~]|€``) take two septets. Anything outside both
tables would switch the whole message to UCS-2 (70 characters per segment), so text is
transliterated to GSM-7 before it is measured.
"""

from __future__ import annotations

import unicodedata

BASIC = set(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
EXTENSION = set("^{}\\[~]|€\f")
SEGMENT = 160

_REPLACE = {
    "\u2014": "-", "\u2013": "-", "\u2212": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u2026": "...", "\u00a0": " ", "\t": " ", "\u2265": ">=", "\u2264": "<=", "\u00b0": "deg", "`": "'",
    "Ł": "L", "ł": "l", "Đ": "D", "đ": "d", "Œ": "OE", "œ": "oe", "Þ": "Th", "þ": "th", "ı": "i",
}


def septets(text: str) -> int:
    """Length in GSM-7 septets; raises ValueError on a character GSM-7 cannot carry."""
    n = 0
    for ch in text:
        if ch in BASIC:
            n += 1
        elif ch in EXTENSION:
            n += 2
        else:
            raise ValueError(f"not a GSM-7 character: {ch!r}")
    return n


def to_gsm7(text: str) -> str:
    """Transliterate to GSM-7: curly quotes and dashes to ASCII, accents dropped where the
    accented letter is not in the table, anything else to '?'."""
    out = []
    for ch in text:
        if ch in BASIC or ch in EXTENSION:
            out.append(ch)
            continue
        if ch in _REPLACE:
            out.append(_REPLACE[ch])
            continue
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append(base if base and all(c in BASIC for c in base) else "?")
    return "".join(out)


def fit(text: str, budget: int) -> str:
    """``text`` cut to at most ``budget`` septets, ending in '..' when cut."""
    if septets(text) <= budget:
        return text
    out = ""
    for ch in text:
        if septets(out + ch) > budget - 2:
            break
        out += ch
    return out.rstrip() + ".."
