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
