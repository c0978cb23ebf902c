"""contract/yamlfile.py: a YAML file into a model, every error one line with file, line and field."""

from __future__ import annotations

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
