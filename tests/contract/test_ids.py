import pytest

from ms4watch.contract.ids import Channel, DeviceId, StationId, Topic, subscription


def test_topic_round_trip():
    t = Topic("ramapo", "OF-12", "LOG-OF12", Channel.READINGS)
    assert str(t) == "ms4/ramapo/OF-12/LOG-OF12/readings"
    assert Topic.parse(str(t)) == t


@pytest.mark.parametrize("text", [
    "ms4/ramapo/OF-12/LOG-OF12",            # no channel
    "ms4/ramapo/OF-12/LOG-OF12/readingz",   # unknown channel
    "xx/ramapo/OF-12/LOG-OF12/readings",    # wrong prefix
    "ms4/ramapo/OF 12/LOG-OF12/readings",   # space in station
    "ms4/ramapo/+/LOG-OF12/readings",       # wildcard is not a concrete topic
])
def test_topic_rejects(text):
    with pytest.raises(ValueError, match="Invalid topic"):
        Topic.parse(text)


def test_ids_validate_themselves():
    assert str(StationId("RG-1")) == "RG-1"
    with pytest.raises(ValueError, match="invalid device id"):
        DeviceId("log/1")
    with pytest.raises(ValueError, match="invalid station id"):
        StationId("")


def test_subscription_filter():
    assert subscription("ramapo", "status") == "ms4/ramapo/+/+/status"
    with pytest.raises(ValueError):
        subscription("ramapo", "nope")


@pytest.mark.parametrize("text", ["LOG-1\n", "LOG-1\r", "\nLOG-1", "A" * 65, "LOG-1 "])
def test_an_id_is_the_whole_string(text):
    """``$`` matches before a final newline: "LOG-1\\n" passed and became a phantom series."""
    with pytest.raises(ValueError, match="invalid device id"):
        DeviceId(text)
