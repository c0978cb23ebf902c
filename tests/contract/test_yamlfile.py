"""contract/yamlfile.py: a YAML file into a model, every error one line with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.registry import parse_registry


def test_a_key_libyaml_reads_and_pyyaml_refuses_is_one_clear_error_not_a_crash():
    """libyaml (the fast parser) takes a tab inside a key; the pure-Python parser, which
    gives the lines of an error, refuses it. Found by tests/fuzz/test_loaders.py: the second
    parse raised its ScannerError out of the loader. Its verdict is the error."""
    with pytest.raises(ConfigError) as e:
        parse_registry("m\tunicipality: brookhollow\n", "sites.yaml")
    assert str(e.value).splitlines()[0] == ("sites.yaml:1: not valid YAML: "
                                            "found character '\\t' that cannot start any token")


def test_a_file_not_in_utf8_names_its_line(tmp_path):
    """A mapping or registry saved in Windows-1252 (Notepad's "ANSI") is one line naming the
    file and the line of the first byte that is not UTF-8, not a UnicodeDecodeError."""
    from ms4watch.contract.errors import ConfigError
    from ms4watch.contract.yamlfile import load_yaml_model
    from pydantic import BaseModel

    class Doc(BaseModel):
        a: str

    bad = tmp_path / "ansi.yaml"
    bad.write_bytes("# comment\na: Rié Creek\n".encode("cp1252"))
    with pytest.raises(ConfigError, match=r"ansi.yaml:2: not UTF-8 \(byte 0xe9\); save the file as UTF-8"):
        load_yaml_model(bad, Doc)


DEMO_REGISTRY = (Path(__file__).resolve().parents[2] / "firmware_configs" / "demo" / "sites.yaml").read_text()


@pytest.mark.parametrize("typo, line, said", [
    ("active_from: 2026-02-30", 36, "2026-02-30 is not a date (day is out of range for month)"),
    ("active_from: 2026-13-01", 36, "2026-13-01 is not a date (month must be in 1..12)"),
    ("active_to: 2026-09-31", 38, "2026-09-31 is not a date (day is out of range for month)"),
])
def test_a_date_that_is_not_one_names_its_line(typo, line, said):
    """YAML reads 2026-02-30 as a date (its form is one), and PyYAML's constructor raised
    datetime's ValueError out of the loader, with no file or line: a typo in a site's dates took
    `serve` down with "day is out of range for month". Found by tests/fuzz/test_loaders.py
    (a key 2026-13-45)."""
    field = typo.split(":")[0]
    text = DEMO_REGISTRY
    start = text.index(f"{field}: ", text.index("id: CS-1" if line == 36 else "id: CS-2"))
    end = text.index(",", start)
    text = text[:start] + typo + text[end:]
    assert text.splitlines()[line - 1].count(typo) == 1
    with pytest.raises(ConfigError) as e:
        parse_registry(text, "sites.yaml")
    assert str(e.value).splitlines()[0] == f"sites.yaml:{line}: not valid YAML: {said}"


def test_a_key_that_is_not_a_date_is_the_same_error():
    with pytest.raises(ConfigError) as e:
        parse_registry("2026-13-45: x\nmunicipality: brookhollow\n", "sites.yaml")
    assert str(e.value).splitlines()[0] == "sites.yaml:1: not valid YAML: 2026-13-45 is not a date (month must be in 1..12)"
