"""The first chart or packet a server draws is no slower than the next: matplotlib and
reportlab are imported, and a chart and a PDF drawn once, in a thread at start-up (a fresh
interpreter: the test process has long imported both)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_the_server_warms_the_plotting_and_pdf_libraries_at_start(tmp_path):
    code = textwrap.dedent(f"""
        import sys, threading
        from ms4watch.demo import demo_configs
        from ms4watch.server import build_server
        from ms4watch.settings import Settings
        from ms4watch.workbench import warmup
        from tests.support.servers import free_port
        from ms4watch.broker import EmbeddedBroker

        heavy = ("matplotlib.figure", "matplotlib.backends.backend_agg", "reportlab.platypus")
        broker = EmbeddedBroker(port=free_port()).start()
        settings = Settings.model_validate({{
            "registry": demo_configs() / "sites.yaml", "data_dir": {str(tmp_path / "data")!r},
            "broker": {{"url": broker.url, "username": "u", "password": "p"}}, "http": {{"listen": "127.0.0.1:0"}}}})
        server = build_server(settings, report=lambda line: None)
        assert not [m for m in heavy[:2] if m in sys.modules]   # (reportlab: imported by the compliance desk)
        server.start()
        try:
            assert warmup.done.wait(60), "no warm-up"
            print(sorted(m for m in heavy if m in sys.modules), warmup.done.is_set())
        finally:
            server.stop()
            broker.stop()
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "['matplotlib.backends.backend_agg', 'matplotlib.figure', 'reportlab.platypus'] True" in r.stdout


def test_a_warm_up_asked_to_stop_draws_nothing_more(monkeypatch):
    """A server stopped in its first seconds (a test, a misconfigured unit restarting) waited
    for the whole warm-up, ~1 s of CPU drawing a chart and a PDF nobody asks for: the warm-up
    looks at the server's stop before each step (one already drawing is finished: a process
    must not exit while matplotlib draws)."""
    import threading

    from ms4watch.workbench import warmup

    steps: list[str] = []
    stopping = threading.Event()

    def chart() -> None:
        steps.append("chart")
        stopping.set()           # the server asked to stop while the chart was drawn

    monkeypatch.setattr(warmup, "_chart", chart)
    monkeypatch.setattr(warmup, "_pdf", lambda: steps.append("pdf"))
    monkeypatch.setattr(warmup, "_started", threading.Lock())
    monkeypatch.setattr(warmup, "done", threading.Event())
    t = warmup.start(stopping)
    assert t is not None
    t.join(10)
    assert steps == ["chart"] and warmup.done.is_set()

    monkeypatch.setattr(warmup, "_started", threading.Lock())
    steps.clear()
    t = warmup.start(stopping)            # stopped before it began: nothing drawn
    assert t is not None
    t.join(10)
    assert steps == []
