"""Property-based fuzzing (hypothesis) of what people and loggers hand us as files: the
registry and firmware-config loaders, the readings CSV and every rain-record format.

Whatever the input, the answer is the project's own error naming file and line (an
``Ms4Error``), or a result; never another exception (issue 14, "Hostile and broken input").
"""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ms4watch.alerts.rainfiles import RainFormat, read_rain
from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.readings_csv import read_readings_csv
from ms4watch.contract.registry import parse_registry
from ms4watch.edge.config import parse_agent_config

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "firmware_configs" / "demo"
FUZZ = settings(max_examples=int(__import__("os").environ.get("MS4_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

# Mutations of a real file: characters YAML and CSV care about, numbers at the edges.
NASTY = st.sampled_from([":", "-", " ", "\n", "\t", "'", '"', "[", "]", "{", "}", ",", "#", "&", "*", "!", "|",
                         ">", "%", "@", "`", "\\", "\x00", "\ufeff", "1e309", "-1", "0", "nan", "9999-12-31",
                         "0001-01-01", "2026-13-45", "true", "null", "~", "\u202e", "é", "🙂"])


@st.composite
def mutated(draw, text: str):
    chars = list(text)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate_line", "swap_lines"]))
        i = draw(st.integers(0, max(0, len(chars) - 1)))
        if op == "insert":
            chars[i:i] = list(draw(NASTY))
        elif op == "delete" and chars:
            del chars[i:i + draw(st.integers(1, 20))]
        elif op == "replace" and chars:
            chars[i] = draw(NASTY)
        else:
            lines = "".join(chars).split("\n")
            j = draw(st.integers(0, len(lines) - 1))
            if op == "duplicate_line":
                lines.insert(j, lines[j])
            else:
                k = draw(st.integers(0, len(lines) - 1))
                lines[j], lines[k] = lines[k], lines[j]
            chars = list("\n".join(lines))
    return "".join(chars)


REGISTRY = (DEMO / "sites.yaml").read_text()
FIRMWARE = (DEMO / "LOG-OF1.yaml").read_text()


@FUZZ
@given(mutated(REGISTRY))
def test_registry_loader(text):
    try:
        parse_registry(text, "sites.yaml")
    except Ms4Error as e:
        assert str(e).startswith("sites.yaml")


@FUZZ
@given(st.text(alphabet=string.printable + "é🙂\x00", max_size=300))
def test_registry_loader_on_anything(text):
    try:
        parse_registry(text, "sites.yaml")
    except Ms4Error:
        pass


@FUZZ
@given(mutated(FIRMWARE))
def test_firmware_config_loader(text):
    try:
        parse_agent_config(text, "LOG-OF1.yaml")
    except Ms4Error as e:
        assert str(e).startswith("LOG-OF1.yaml")


READINGS = """time,station,quantity,value,unit
2026-06-01T12:00:00Z,RG-1,rain,0.01,in
2026-06-01T12:05:00-04:00,OF-1,flow,3.2,L/s
2026-06-01T12:10:00+00:00,TD-1,turbidity,12,NTU
"""


@FUZZ
@given(mutated(READINGS))
def test_readings_csv(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("csv") / "readings.csv"
    p.write_text(text, encoding="utf-8")
    try:
        read_readings_csv(p)
    except Ms4Error:
        pass


RAIN = {
    RainFormat.TIPS: "Date Time,Count\n05/01/24 13:59:36,0\n05/01/24 14:04:20,1\n05/01/24 14:09:02,2\n",
    RainFormat.FIXED: "DateTime,Rain_mm\n2022-05-01 00:00:00,0\n2022-05-01 00:05:00,0.2\n2022-05-01 00:10:00,0.4\n",
    RainFormat.RDB: "# USGS\nDateTime\tgage1\n20d\t8n\n2013/06/01 00:01\t0.01\n2013/06/01 00:02\t-9\n",
    RainFormat.READINGS: READINGS,
}


@FUZZ
@given(st.sampled_from(list(RAIN)), st.data())
def test_rain_records(tmp_path_factory, fmt, data):
    text = data.draw(mutated(RAIN[fmt]))
    p = tmp_path_factory.mktemp("rain") / "rain.csv"
    p.write_text(text, encoding="utf-8")
    for given_fmt in (fmt, None):            # as told, and sniffed
        try:
            read_rain(p, fmt=given_fmt)
        except Ms4Error:
            pass
