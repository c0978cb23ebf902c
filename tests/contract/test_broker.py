"""The broker settings the pipeline needs (contract/broker.py) fit what loggers send and ingest takes.

Their effect on a real Mosquitto is tested in tests/ingest/test_broker_settings.py.
"""

from annotated_types import Le

from ms4watch.contract.broker import MESSAGE_SIZE_LIMIT_BYTES, mosquitto_conf, mosquitto_settings
from ms4watch.contract.firmware import SpoolSettings
from ms4watch.contract.wire import QualityFlag, decode_readings, encode_readings


def test_the_largest_message_a_logger_forms_passes_the_broker():
    """A backlog message of the most readings a firmware config allows, each as long as the
    contract lets it be, is under the broker's limit (about 3.4 MiB of 8)."""
    most = next(m.le for m in SpoolSettings.model_fields["batch_readings"].metadata if isinstance(m, Le))
    long_id = "S" * 64
    row = (1_780_000_000_123_000_000, long_id, "temperature", -1.2345678901234567e-05, "degF",
           [f.value for f in QualityFlag if f is not QualityFlag.SENSOR_ERROR], long_id)
    largest = encode_readings("D" * 64, 2**63 - 1, [row] * most, epoch=2**31 - 1)
    assert len(decode_readings("t", largest).readings) == most
    assert len(largest) < MESSAGE_SIZE_LIMIT_BYTES


def test_the_settings_as_a_config_file():
    settings = mosquitto_settings()
    assert settings["max_queued_messages"] == "0" and int(settings["max_inflight_messages"]) >= 1000
    assert settings["persistence"] == "true" and settings["message_size_limit"] == str(MESSAGE_SIZE_LIMIT_BYTES)
    conf = mosquitto_conf(settings)
    assert conf.splitlines()[0] == "persistence true" and "message_size_limit 8388608\n" in conf
