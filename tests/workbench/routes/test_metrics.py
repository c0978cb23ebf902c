"""Who reads ``/metrics`` and the details of ``/health/ready``: the networks and the bearer
token the settings name, an API token of the town's admin; anyone else learns only whether
the server is ready (not which part failed, nor the broker's address)."""

from __future__ import annotations

import pytest

from ms4watch.workbench.roles import Role
from tests.support.workbench import start_bench

METRICS_TOKEN = "prometheus-" + "m" * 32


def test_anonymous_gets_neither_metrics_nor_readiness_details(bench):
    bench.subscribed()
    with bench.api() as anonymous:
        r = anonymous.get("/metrics")
        assert r.status_code == 401 and "metrics_networks" in r.json()["detail"]
        assert anonymous.get("/health/ready").json() == {"status": "ready"}
        assert anonymous.get("/health").json() == {"status": "ok"}
    for role in ("viewer", "inspector", "smo"):
        with bench.api(role) as c:
            assert c.get("/metrics").status_code == 403, role
            assert "checks" not in c.get("/health/ready").json(), role
    with bench.api("admin") as admin:
        assert "ms4watch_outbox_notifications" in admin.get("/metrics").text
        assert set(admin.get("/health/ready").json()["checks"]) == {"broker", "store", "delivery queue"}


def test_an_admin_of_another_town_reads_nothing_of_this_one(bench):
    bench.subscribed()
    bench.workbench.users.add("elsewhere", "correct horse battery", municipality="ramapo", role=Role.ADMIN)
    token = bench.workbench.users.create_token("elsewhere", "t")[1]
    with bench.client(headers={"Authorization": f"Bearer {token}"}) as c:
        assert c.get("/metrics").status_code == 403
        assert c.get("/health/ready").json() == {"status": "ready"}


@pytest.mark.parametrize("web, headers, allowed", [
    ({"metrics_networks": ["127.0.0.0/8"]}, {}, True),
    ({"metrics_networks": ["10.0.0.0/8", "::1"]}, {}, False),
    ({"metrics_token": METRICS_TOKEN}, {"Authorization": f"Bearer {METRICS_TOKEN}"}, True),
    ({"metrics_token": METRICS_TOKEN}, {"Authorization": f"Bearer {METRICS_TOKEN[:-1]}x"}, False),
])
def test_the_configured_networks_and_bearer_read_everything(tmp_path, clock, web, headers, allowed):
    bench = start_bench(tmp_path, clock, web=web)
    try:
        with bench.client(headers=headers) as c:
            assert (c.get("/metrics").status_code == 200) is allowed
            assert ("checks" in c.get("/health/ready").json()) is allowed
    finally:
        bench.close()
