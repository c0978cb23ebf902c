"""The workbench's templates compiled once per test process (tests/support/workbench.py):
each test's app has a Jinja environment of its own, and compiling the templates of a page
again for each was a tenth of a workbench test's CPU."""

from __future__ import annotations

import re

from jinja2 import Environment

from tests.support.notify_peers import Clock, utc
from tests.support import workbench as workbench_support
from tests.support.workbench import start_bench


def test_a_second_bench_renders_its_pages_without_compiling_a_template(tmp_path, monkeypatch):
    compiled: list[str] = []
    original = Environment.compile

    def counting(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return original(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(Environment, "compile", counting)
    # a cache of this test's own: what the tests before it compiled is not there
    monkeypatch.setattr(workbench_support, "COMPILED_TEMPLATES", workbench_support.CompiledTemplates())
    pages = []
    for k in ("a", "b"):
        bench = start_bench(tmp_path / k, Clock(utc(2026, 6, 1, 12)))
        try:
            r = bench.login("smo").get("/incidents")
            assert r.status_code == 200
            pages.append(re.sub(r'name="csrf" value="[^"]+"', "", r.text))   # each session its own token
        finally:
            bench.close()
        if k == "a":
            first, compiled = compiled, []
    assert first, "the first bench compiled nothing: the test sees no compiling"
    assert compiled == []
    assert pages[0] == pages[1]
