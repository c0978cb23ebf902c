"""Free text a record requires: at least one character that is not white space.

The pattern is read twice: by pydantic (Rust's regex: ``\\s`` is Unicode White_Space, with
U+0085 NEXT LINE and without U+FEFF) when a request is taken, and by the clients of the
OpenAPI schema (JSON Schema's ECMA-262 regex: ``\\s`` with U+FEFF and without U+0085). Plain
``\\S`` let "\\x85" pass the schema and fail the server (a schema-valid request answered
422); naming both characters makes the two readings agree."""

from __future__ import annotations

NOT_BLANK = r"[^\s\x85\ufeff]"
"""A ``pattern`` for text fields: some character that is white space in neither reading."""

__all__ = ["NOT_BLANK"]
