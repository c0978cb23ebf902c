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


def test_a_coalitions_folder_holds_every_towns_loggers_and_each_town_gets_its_own(tmp_path):
    (tmp_path / "a.yaml").write_text(SITES)
    (tmp_path / "b.yaml").write_text(SITES.replace("town", "other"))
    (tmp_path / "LOG-1.yaml").write_text(config())
    (tmp_path / "LOG-9.yaml").write_text(config("LOG-9", municipality="other"))
    skip = (tmp_path / "a.yaml", tmp_path / "b.yaml")
    town = load_devices(load_registry(tmp_path / "a.yaml"), tmp_path, skip=skip, others=frozenset({"other"}))
    other = load_devices(load_registry(tmp_path / "b.yaml"), tmp_path, skip=skip, others=frozenset({"town"}))
    assert [d.id for d in town] == ["LOG-1"] and [d.id for d in other] == ["LOG-9"]
    (tmp_path / "LOG-5.yaml").write_text(config("LOG-5", municipality="elsewhere"))
    with pytest.raises(ConfigError, match="LOG-5.yaml: municipality: 'elsewhere' is not the registry's 'town'"):
        load_devices(load_registry(tmp_path / "a.yaml"), tmp_path, skip=skip, others=frozenset({"other"}))
