"""``ms4watch incidents list|show|ack|resolve|inspected`` on a real database."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ms4watch import cli
from ms4watch.alerts.incidents import IncidentStore, State, connect
from ms4watch.commands import incidents
from tests.support.notify_peers import dwf, inspection, utc


def build_app() -> typer.Typer:
    # Only this command: the other commands' tests are theirs.
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    incidents.register(app)
    return app


@pytest.fixture(autouse=True)
def _town(tmp_path, monkeypatch):
    """The town the command opens (``open_town``): the registry the server's settings name."""
    (tmp_path / "town.yaml").write_text("municipality: town\ntimezone: America/New_York\n")
    monkeypatch.setenv("MS4WATCH_REGISTRY", str(tmp_path / "town.yaml"))


def test_listed_in_the_cli():
    assert "incidents" in cli.COMMANDS


def _db(tmp_path):
    db = tmp_path / "inc.db"
    store = IncidentStore(connect(db))
    a = store.apply_event(dwf("2026-06-01T15:30:00Z"), utc(2026, 6, 1, 16)).incident
    b = store.apply_event(inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z"), utc(2026, 6, 1, 19)).incident
    return db, store, a, b


def test_list_ack_resolve_show(tmp_path):
    db, store, a, b = _db(tmp_path)
    run = CliRunner().invoke
    app = build_app()
    r = run(app, ["incidents", "list", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert a.code in r.output and b.code in r.output
    assert "dry-weather flow" in r.output and "dry_weather_flow" not in r.output    # the kind's name, in words

    r = run(app, ["incidents", "ack", a.code, "--db", str(db), "--by", "Pat", "--note", "looking"])
    assert r.exit_code == 0, r.output
    assert store.get(a.id).state is State.ACKNOWLEDGED

    r = run(app, ["incidents", "resolve", str(a.id), "--db", str(db), "--by", "Pat"])
    assert r.exit_code != 0 and "--note" in r.output
    r = run(app, ["incidents", "resolve", str(a.id), "--db", str(db), "--by", "Pat", "--note", "sump pump, exempt"])
    assert r.exit_code == 0, r.output
    assert store.get(a.id).state is State.RESOLVED

    r = run(app, ["incidents", "ack", str(a.id), "--db", str(db), "--by", "Pat"])
    assert r.exit_code == 1 and "already resolved" in r.output

    r = run(app, ["incidents", "list", "--db", str(db)])
    assert a.code not in r.output and b.code in r.output

    r = run(app, ["incidents", "show", a.code, "--db", str(db)])
    assert r.exit_code == 0 and "sump pump, exempt" in r.output and "acknowledged" in r.output


def test_inspected_resolves_the_site_item(tmp_path):
    db, store, a, b = _db(tmp_path)
    r = CliRunner().invoke(build_app(), ["incidents", "inspected", "CS-7", "--db", str(db), "--by", "Ian",
                                         "--at", "2026-06-02T09:00:00-04:00"])
    assert r.exit_code == 0, r.output
    assert store.get(b.id).resolution == "inspection" and store.get(a.id).state is State.OPEN


def test_missing_database_is_a_clear_error(tmp_path):
    r = CliRunner().invoke(build_app(), ["incidents", "list", "--db", str(tmp_path / "nope.db")])
    assert r.exit_code != 0 and "no incident database" in r.output


def test_the_database_and_time_zone_come_from_the_servers_settings(tmp_path, monkeypatch):
    """Without --db the command opens DATA_DIR/incidents.db of the settings `serve` reads,
    and shows times in the municipality's zone (here 11:30 EDT for 15:30Z)."""
    data = tmp_path / "data"
    data.mkdir()
    store = IncidentStore(connect(data / "incidents.db"))
    a = store.apply_event(dwf("2026-06-01T15:30:00Z"), utc(2026, 6, 1, 16)).incident
    (tmp_path / "sites.yaml").write_text("municipality: town\ntimezone: America/New_York\n")
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'registry = "{tmp_path / "sites.yaml"}"\ndata_dir = "{data}"\n')
    monkeypatch.setenv("MS4WATCH_CONFIG", str(cfg))
    r = CliRunner().invoke(build_app(), ["incidents", "show", a.code])
    assert r.exit_code == 0, r.output
    assert "since 2026-06-01 11:30 EDT" in r.output


def test_a_compliance_deadline_is_shown_by_its_last_day(tmp_path):
    """A release known Thursday 2 July 2026 is to be notified by the end of Friday 3 July
    (the next business day): the CLI names that day, as the board and the letter do, not the
    midnight ending it (Saturday 4 July 00:00)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from ms4watch.compliance.calendar import BusinessCalendar
    from ms4watch.compliance.deadlines import release_deadlines
    from ms4watch.compliance.store import Release
    from ms4watch.compliance.watch import deadline_event

    ny = ZoneInfo("America/New_York")
    r = Release(1, "REL-2026-001", "ramapo-218", "non_hazardous", "diesel", "Elm St", "OF-12", None, None,
                datetime(2026, 7, 2, 16, tzinfo=ny), "caller", False, None, "insp")
    db = tmp_path / "inc.db"
    store = IncidentStore(connect(db), tz=ny)
    inc = store.apply_event(deadline_event(release_deadlines(r, BusinessCalendar(ny))[0]), utc(2026, 7, 2, 21)).incident
    out = CliRunner().invoke(build_app(), ["incidents", "show", str(inc.id), "--db", str(db)]).output
    assert "deadline Fri 2026-07-03 (end of day)" in out and "2026-07-04" not in out, out


def test_a_coalition_needs_the_town_named(tmp_path, monkeypatch):
    """A coalition's settings name several towns: ``--town`` picks one (its DATA_DIR/<town>/
    incidents.db); without it, one line and exit 2."""
    monkeypatch.delenv("MS4WATCH_REGISTRY")
    for town in ("ramapo", "suffern"):
        (tmp_path / f"{town}.yaml").write_text(f"municipality: {town}\n")
    store = IncidentStore(connect(tmp_path / "data" / "suffern" / "incidents.db"))
    a = store.apply_event(dwf("2026-06-01T15:30:00Z"), utc(2026, 6, 1, 16)).incident
    cfg = tmp_path / "ms4watch.toml"
    cfg.write_text(f'registries = ["{tmp_path / "ramapo.yaml"}", "{tmp_path / "suffern.yaml"}"]\n'
                   f'data_dir = "{tmp_path / "data"}"\n')
    r = CliRunner().invoke(build_app(), ["incidents", "ack", a.code, "--by", "Pat", "--config", str(cfg)])
    assert r.exit_code == 2 and "ramapo, suffern" in r.output and len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(build_app(), ["incidents", "ack", a.code, "--by", "Pat", "--config", str(cfg),
                                         "--town", "suffern"])
    assert r.exit_code == 0, r.output
    assert store.get(a.id).state is State.ACKNOWLEDGED
