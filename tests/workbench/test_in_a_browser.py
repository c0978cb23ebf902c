"""The workbench in headless Chromium at a phone's size (375 x 812), against a server the
demo pipeline filled (real edge agents, broker, ingest, engine, incidents): log in, see the
open incidents, acknowledge one in the page, see its state change through the API; open
an incident's page (its chart) and an emailed acknowledge link. No console errors; a
screenshot of each page is kept in ``test-artefacts/workbench/`` (also at laptop width)."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import httpx
import pytest

from ms4watch.demo import Demo, DemoOptions
from ms4watch.settings import Settings
from ms4watch.workbench.services import open_users
from tests.support.browser import Browser, chromium_binary
from tests.support.waiting import wait_for

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "workbench"


@pytest.fixture
def demo_server(tmp_path):
    demo = Demo(DemoOptions(days=0.5, speed=0, workdir=tmp_path / "demo", serve=True), report=lambda line: None)
    runner = threading.Thread(target=demo.run, name="demo", daemon=True)
    runner.start()
    try:
        assert wait_for(demo.serving.is_set, timeout_s=120), "the demo never reached --serve"
        yield demo
    finally:
        demo.stop_serving()
        runner.join(60)


def test_log_in_see_open_incidents_acknowledge_one(demo_server, tmp_path):
    if chromium_binary() is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    demo = demo_server
    url = demo.web_url
    user, password = demo.web_login
    users, _, conn = open_users(Settings.model_validate({"data_dir": tmp_path / "demo"}))
    token = users.create_token(user, "browser test")[1]
    conn.close()
    api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    open_before = api.get("/api/v1/incidents", params={"state": "open"}).json()
    assert open_before, "the demo's half day left nothing open"
    notices = (tmp_path / "demo" / "notifications.txt").read_text()
    link = re.search(rf"Acknowledge: ({re.escape(url)}/ack/\S+)", notices).group(1)

    browser = Browser()
    try:
        browser.viewport(375, 812, mobile=True, scale=2)
        browser.goto(f"{url}/incidents")
        browser.wait_for("location.pathname === '/login'")
        browser.screenshot(ARTEFACTS / "phone-login.png")
        browser.js(f"document.querySelector('input[name=username]').value = {user!r};"
                   f"document.querySelector('input[name=password]').value = {password!r};"
                   "document.querySelector('form.stack button[type=submit]').click()")
        browser.wait_for("location.pathname === '/incidents' && document.readyState === 'complete'")
        text = browser.js("document.body.innerText")
        for inc in open_before:
            assert inc["station_name"] in text
        browser.screenshot(ARTEFACTS / "phone-incidents.png")

        first = open_before[0]["id"]
        browser.js(f"document.querySelector('#incident-{first} button[name=ack]').click()")
        browser.wait_for(f"document.readyState === 'complete' && !!document.querySelector('#incident-{first} .badge.acknowledged')")
        assert api.get(f"/api/v1/incidents/{first}").json()["incident"]["state"] == "acknowledged"
        assert api.get(f"/api/v1/incidents/{first}").json()["incident"]["acknowledged_by"] == "Demo SMO"
        browser.screenshot(ARTEFACTS / "phone-incidents-acknowledged.png")

        with_chart = next(i["id"] for i in api.get("/api/v1/incidents", params={"state": ["open", "acknowledged",
                                                                                           "resolved"]}).json()
                          if i["kind"] in ("turbidity_contrast", "dry_weather_flow", "storm"))
        browser.goto(f"{url}/incidents/{with_chart}")
        browser.wait_for("document.querySelector('.chart img').complete && document.querySelector('.chart img').naturalWidth > 600")
        browser.screenshot(ARTEFACTS / "phone-incident.png")
        browser.goto(f"{url}/")
        browser.screenshot(ARTEFACTS / "phone-status.png")
        browser.goto(link)
        assert "Acknowledge" in browser.js("document.body.innerText")
        browser.screenshot(ARTEFACTS / "phone-ack-link.png")

        browser.viewport(1280, 800)
        for name, path in (("incidents", "/incidents?state=all"), ("incident", f"/incidents/{with_chart}")):
            browser.goto(url + path)
            browser.wait_for("Array.from(document.images).every(i => i.complete)")
            browser.screenshot(ARTEFACTS / f"laptop-{name}.png")
        assert browser.console_errors() == []
    finally:
        browser.close()
        api.close()
