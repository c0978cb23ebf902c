"""Write a calibration's new coefficients into the logger's config file, versioned, with the
previous file kept.

The file is edited, not rewritten: only the sensor's ``calibration:`` value and the
``config_version`` change, so the technician's comments and layout stay (YAML node
positions from PyYAML's composer). Where that cannot be done (an unusual layout) the whole
config is written out again, without comments, and the caller is told. Either way the
result is validated completely (schema and every driver's options) before it replaces the
file; the previous file is kept as ``<file>.prev`` and the file is never missing in between
(the running agent watches it and applies the new version).
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from ...contract.errors import ConfigError
from ...contract.firmware import Calibration, FirmwareConfig
from ...contract.yamlfile import read_yaml
from ..config import parse_agent_config

__all__ = ["next_version", "calibration_block", "with_calibration", "write_config"]


def next_version(version: str) -> str:
    """The config version after a calibration: ``3`` → ``3+cal1`` → ``3+cal2``.

    Never a plain number the office might also choose for its next config: a version the
    office sends is then always told apart from one the logger made in the field."""
    m = re.fullmatch(r"(.*)\+cal(\d+)", version)
    return f"{m.group(1)}+cal{int(m.group(2)) + 1}" if m else f"{version}+cal1"


def calibration_block(cal: Calibration) -> str:
    """A ``calibration:`` value as one YAML flow mapping."""
    parts = [f"performed: {cal.performed.isoformat()}", f"due: {cal.due.isoformat()}"]
    if cal.points:
        parts.append("points: [" + ", ".join(f"[{_num(a)}, {_num(b)}]" for a, b in cal.points) + "]")
    else:
        parts += [f"slope: {_num(cal.slope)}", f"offset: {_num(cal.offset)}"]
    if cal.record:
        parts.append(f"record: {cal.record}")
    return "{" + ", ".join(parts) + "}"


def _num(x: float) -> str:
    return repr(float(x))


def _key(mapping: yaml.MappingNode, name: str) -> tuple[yaml.Node, yaml.Node] | None:
    for k, v in mapping.value:
        if isinstance(k, yaml.ScalarNode) and k.value == name:
            return k, v
    return None


def _edits(text: str, sensor_id: str, block: str, version: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) edits; raises ValueError where the layout is not handled."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise ValueError("the top level is not a block mapping")
    sensors = _key(root, "sensors")
    if sensors is None or not isinstance(sensors[1], yaml.SequenceNode):
        raise ValueError("no sensors list")
    item = next((s for s in sensors[1].value if isinstance(s, yaml.MappingNode)
                 and (kv := _key(s, "id")) is not None and kv[1].value == sensor_id), None)
    if item is None:
        raise ValueError(f"no sensor {sensor_id!r}")
    edits: list[tuple[int, int, str]] = []
    cal = _key(item, "calibration")
    if cal is not None:
        k, v = cal
        if isinstance(v, yaml.MappingNode) and not v.flow_style:
            colon = text.index(":", k.end_mark.index)
            edits.append((colon, v.end_mark.index, ": " + block + "\n" + " " * v.end_mark.column))
        else:
            edits.append((v.start_mark.index, v.end_mark.index, block))
    elif item.flow_style:
        close = text.rindex("}", item.start_mark.index, item.end_mark.index)
        edits.append((close, close, ", calibration: " + block))
    else:
        first_key = item.value[0][0]
        at = item.end_mark.index - item.end_mark.column
        line = " " * first_key.start_mark.column + "calibration: " + block + "\n"
        if at == len(text) and text and not text.endswith("\n"):
            line = "\n" + line
        elif item.end_mark.column and text[at:item.end_mark.index].strip():
            raise ValueError("the sensor's mapping does not end at a line break")
        edits.append((at, at, line))
    ver = _key(root, "config_version")
    quoted = '"' + version.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if ver is not None:
        if not isinstance(ver[1], yaml.ScalarNode):
            raise ValueError("config_version is not a plain value")
        edits.append((ver[1].start_mark.index, ver[1].end_mark.index, quoted))
    else:
        first = root.value[0][0]
        at = first.start_mark.index - first.start_mark.column
        edits.append((at, at, f"config_version: {quoted}\n"))
    return sorted(edits, reverse=True)


def with_calibration(text: str, source: str, sensor_id: str, cal: Calibration,
                     version: str) -> tuple[str, FirmwareConfig, bool]:
    """``text`` with ``sensor_id``'s calibration set to ``cal`` and ``config_version`` set to
    ``version``: (new text, the validated config, whether the file kept its layout)."""
    edited = True
    try:
        out = text
        for start, end, new in _edits(text, sensor_id, calibration_block(cal), version):
            out = out[:start] + new + out[end:]
        config, _ = parse_agent_config(out, source)
        sensor = next(s for s in config.sensors if s.id == sensor_id)
        if sensor.calibration != cal or config.config_version != version:
            raise ValueError("the edited file does not say what was meant")
    except (ValueError, StopIteration, yaml.YAMLError, ConfigError):
        edited = False
        data: dict[str, Any] = read_yaml(text)   # as the agent read it (libyaml takes a tab PyYAML refuses)
        for s in data.get("sensors", []):
            if isinstance(s, dict) and s.get("id") == sensor_id:
                s["calibration"] = cal.model_dump(mode="json", exclude_none=True)
        data["config_version"] = version
        out = "# rewritten by ms4watch calibrate (its comments could not be kept)\n" + \
            yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
        config, _ = parse_agent_config(out, source)
    return out, config, edited


def write_config(path: str | Path, text: str) -> Path:
    """Replace the config file by ``text`` atomically (fsync'd), keeping the previous one as
    ``<file>.prev``; the file exists throughout. Returns the ``.prev`` path."""
    path = Path(path)
    prev = path.with_name(path.name + ".prev")
    old = path.read_bytes()
    _atomic(prev, old, path)
    _atomic(path, text.encode("utf-8"), path)
    return prev


def _atomic(target: Path, data: bytes, like: Path) -> None:
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    try:
        st = os.stat(like)
        os.chmod(tmp, st.st_mode & 0o7777)
    except OSError:
        pass
    os.replace(tmp, target)


def new_calibration(previous: Calibration | None, fit_slope: float, fit_offset: float,
                    points: tuple[tuple[float, float], ...] | None, performed: date, due: date,
                    record: str) -> Calibration:
    """The ``calibration:`` block a run leaves behind."""
    if points:
        return Calibration(performed=performed, due=due, points=points, record=record)
    return Calibration(performed=performed, due=due, slope=fit_slope, offset=fit_offset, record=record)
