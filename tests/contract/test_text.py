from __future__ import annotations

import jsonschema_rs
import pytest
from pydantic import BaseModel, Field, ValidationError

from ms4watch.contract.text import NOT_BLANK


class Note(BaseModel):
    text: str = Field(min_length=1, pattern=NOT_BLANK)


@pytest.mark.parametrize("text, taken", [("a", True), (" x ", True), ("\u180e", True), ("é", True),
                                         (" ", False), ("\t\n", False), ("\x85", False), ("\ufeff", False),
                                         ("\xa0", False), ("\u2028", False), ("\u3000", False)])
def test_the_server_and_the_schemas_clients_agree_on_blank_text(text, taken):
    """pydantic (Rust regex) and JSON Schema (ECMA-262) read ``\\s`` differently: U+0085 and
    U+FEFF each count as white space in one only."""
    schema = jsonschema_rs.validator_for(Note.model_json_schema()["properties"]["text"])
    assert schema.is_valid(text) is taken
    if taken:
        assert Note(text=text).text == text
    else:
        with pytest.raises(ValidationError, match="String should match pattern"):
            Note(text=text)
