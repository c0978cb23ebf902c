"""The town's list of loggers: the firmware configs beside the registry."""

from pathlib import Path

import pytest

from ms4watch.contract.devices import load_devices
from ms4watch.contract.errors import ConfigError
from ms4watch.contract.registry import load_registry

DEMO = Path(__file__).resolve().parents[2] / "firmware_configs" / "demo"


def test_the_demo_towns_loggers_and_their_stations():
    reg = load_registry(DEMO / "sites.yaml")
    devices = load_devices(reg, DEMO, skip=(DEMO / "sites.yaml",))
    assert [d.id for d in devices] == ["LOG-DS1", "LOG-OF1", "LOG-OF2", "LOG-OF3", "LOG-RG1", "LOG-RG2", "LOG-US1"]
    assert devices.get("LOG-OF1").stations == {"OF-1"} and devices.get("LOG-X") is None


def config(device="LOG-1", station="OF-1", municipality="town", sensor_station=None):
    extra = f", station: {sensor_station}" if sensor_station else ""
    return (f"device: {device}\nmunicipality: {municipality}\nstation: {station}\n"
            f"sensors:\n  - {{id: flow, driver: sim, quantity: flow, unit: gpm{extra}}}\n")


SITES = "municipality: town\nrain_gauges: [{id: RG-1}]\noutfalls: [{id: OF-1, name: x, rain_gauges: [RG-1]}]\n"


@pytest.mark.parametrize("files, error", [
    ({"a.yaml": config(sensor_station="RG-1")}, None),
    ({"a.yaml": config(municipality="other")}, "a.yaml: municipality: 'other' is not the registry's 'town'"),
    ({"a.yaml": config(station="OF-9")}, "a.yaml: station: unknown station 'OF-9': not in the registry "
                                         "(known: OF-1, RG-1)"),
    ({"a.yaml": config(sensor_station="RG-7")}, "a.yaml: sensors[0].station: unknown station 'RG-7'"),
    ({"a.yaml": config(), "b.yaml": config(station="RG-1")}, "b.yaml: device: 'LOG-1' is also in"),
    ({"a.yaml": "device: [\n"}, "a.yaml:2: not valid YAML"),
])
def test_a_list_that_does_not_fit_the_registry_is_refused_naming_file_and_field(tmp_path, files, error):
    reg_path = tmp_path / "sites.yaml"
    reg_path.write_text(SITES)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    if error is None:
        d = load_devices(load_registry(reg_path), tmp_path, skip=(reg_path,))
        assert d.get("LOG-1").stations == {"OF-1", "RG-1"}
        return
    with pytest.raises(ConfigError) as e:
        load_devices(load_registry(reg_path), tmp_path, skip=(reg_path,))
    assert error in str(e.value) and str(tmp_path) in str(e.value)
