"""Load a YAML file into a pydantic model, with file, line and field in every error."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from .errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def _walk(node: yaml.Node, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> None:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value
            lines[path + (key,)] = k.start_mark.line + 1
            _walk(v, path + (key,), lines)
            lines[path + (key,)] = k.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _walk(v, path + (i,), lines)


def _line_for(loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> int | None:
    for n in range(len(loc), -1, -1):
        key = tuple(str(p) if not isinstance(p, int) else p for p in loc[:n])
        if key in lines:
            return lines[key]
    return None


def field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out


def load_yaml_model(path: str | Path, model: type[M], context: dict[str, Any] | None = None) -> M:
    """Parse ``path`` and validate it as ``model``; raise :class:`ConfigError` on any problem."""
    path = Path(path)
    source = str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(source, [(None, "", f"cannot read: {e.strerror}")]) from None
    try:
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")   # as read_text's newlines
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise ConfigError(source, [(line, "", f"not UTF-8 (byte 0x{data[e.start]:02x}); save the file as UTF-8")]) from None
    return parse_yaml_model(text, model, source, context)


# libyaml's parser when PyYAML has it (~15x faster: a registry in 0.5 ms, not 7 ms). Errors
# and line numbers come from the pure-Python parser, read again only when there is an error,
# so their wording does not depend on how PyYAML was built.
_FAST_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    """A scalar of a date's form (YAML 1.1 reads ``2026-02-30`` as one) that is no date: an
    error at its line, not datetime's ValueError out of the loader."""
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError as e:
        raise yaml.constructor.ConstructorError(None, None, f"{node.value} is not a date ({e})",
                                                node.start_mark) from None


class _FastLoader(_FAST_BASE):  # type: ignore[misc]
    pass


class _Loader(yaml.SafeLoader):
    pass


for _loader in (_FastLoader, _Loader):
    _loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp)
_FAST_LOADER: Any = _FastLoader


def _not_yaml(source: str, e: yaml.YAMLError) -> ConfigError:
    mark = getattr(e, "problem_mark", None)
    line = mark.line + 1 if mark else None
    return ConfigError(source, [(line, "", f"not valid YAML: {getattr(e, 'problem', e)}")])


def key_lines(text: str, source: str) -> dict[tuple[Any, ...], int]:
    """The line of every mapping key and sequence item of ``text``, by the pure-Python parser.
    Where it refuses what libyaml read (a tab inside a key), its refusal is the error."""
    lines: dict[tuple[Any, ...], int] = {}
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        raise _not_yaml(source, e) from None
    if node is not None:
        _walk(node, (), lines)
    return lines


def located_error(text: str, source: str, problems: list[tuple[tuple[Any, ...], str]]) -> ConfigError:
    """``problems`` (a field's location, what is wrong) as one error naming each one's line of ``text``."""
    lines = key_lines(text, source)
    return ConfigError(source, [(_line_for(loc, lines), field_path(loc), msg) for loc, msg in problems])


def read_yaml(text: str) -> Any:
    """What a config file says, as the loaders read it: libyaml's reading, or PyYAML's where libyaml
    is the stricter (raises PyYAML's error where both refuse)."""
    try:
        return yaml.load(text, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        return yaml.load(text, Loader=_Loader)


def parse_yaml_model(text: str, model: type[M], source: str, context: dict[str, Any] | None = None) -> M:
    try:
        data = read_yaml(text)
    except yaml.YAMLError as e:
        raise _not_yaml(source, e) from None
    if data is None:
        raise ConfigError(source, [(None, "", "file is empty")])
    if not isinstance(data, dict):
        raise ConfigError(source, [(1, "", "expected a mapping at the top level")])
    try:
        result = model.model_validate(data, context=context)
    except ValidationError as e:
        raise located_error(text, source, [(tuple(err["loc"]), err["msg"].removeprefix("Value error, "))
                                           for err in e.errors(include_url=False)]) from None
    # Cross-reference checks a model can offer as ``problems() -> [(field path, message)]``.
    check = getattr(result, "problems", None)
    if callable(check):
        found = check()
        if found:
            raise located_error(text, source, found)
    return result
