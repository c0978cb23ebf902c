"""schemathesis against the OpenAPI schema, with an admin's token: the API answers what the
schema says (status codes, content types, bodies), and no generated request makes it fail
(5xx). Bounded: a fixed number of derandomised examples per operation.

The app runs in process (schemathesis's ASGI transport), as the other route tests run it: on
uvicorn each of the ~1,100 calls (a case and its unauthenticated probe) cost a new
connection and a requests session, a third of the file's CPU. What only a socket shows is
tested on uvicorn elsewhere (tests/workbench/test_serving.py, test_behind_nginx.py).

(schemathesis's pytest fixture loader does not run under pytest 9 yet, so the operations
are walked here with hypothesis directly.)"""

from __future__ import annotations

import os
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.notify_peers import dwf, inspection, turbidity
from tests.support.workbench import start_bench

# Examples per operation. Nearly all the time is hypothesis generating request bodies (not the
# HTTP calls): 30 an operation cost ~68 s of the default run. The default run keeps 10 an
# operation over every operation (every status code, content type and body still validated);
# MS4_SLOW=1 (make soak) runs the full 30.
EXAMPLES = 30 if os.environ.get("MS4_SLOW") else 10


def _rfc3339(first_year: int) -> tuple[st.SearchStrategy[str], st.SearchStrategy[str]]:
    """RFC 3339 full-date and date-time (offsets, fractions of a second) from ``first_year``
    to 2100: every date the API takes carries a year pattern, ^(19..|20..|2100)- or
    ^(20..|2100)- (odd years are test_odd_input's). schemathesis draws its dates from years
    1-9999 and keeps those the pattern admits: nearly none, so a body with a date took
    seconds of rejected draws (POST /api/v1/notices: 17 s for 3 examples, not 10)."""
    two = st.integers(0, 59).map("{:02d}".format)
    hour = st.integers(0, 23).map("{:02d}".format)
    offset = st.just("Z") | st.builds("{}{}:{}".format, st.sampled_from("+-"), hour, two)
    fraction = st.just("") | st.text("0123456789", min_size=1, max_size=6).map(".".__add__)
    day = st.dates(date(first_year, 1, 1), date(2100, 12, 31)).map(str)
    return day, st.builds("{}T{}:{}:{}{}{}".format, day, hour, two, two, fraction, offset)


@pytest.fixture
def dates_the_api_takes():
    # schemathesis imported here, not at the module's top: each xdist worker imports every test
    # module to collect it, and schemathesis cost each ~0.3 s of CPU for the one that runs this
    import schemathesis
    from schemathesis.specs.openapi.formats import unregister_string_format

    days, _ = _rfc3339(1900)
    _, times = _rfc3339(2000)
    schemathesis.openapi.format("date", days)
    schemathesis.openapi.format("date-time", times)
    yield
    for name in ("date", "date-time"):   # schemathesis's own again
        unregister_string_format(name)


@pytest.mark.slow  # runs by default at reduced size; MS4_SLOW=1 (make soak) at full size
def test_the_api_conforms_to_its_schema_and_never_fails(tmp_path, clock, dates_the_api_takes):
    import schemathesis

    bench = start_bench(tmp_path, clock).subscribed()   # else /health/ready is 503, rightly: no broker here
    try:
        bench.alerting.handle(dwf("2026-06-01T15:30:00Z"))
        bench.alerting.handle(turbidity("2026-06-01T14:00:00Z", "2026-06-01T15:00:00Z"))
        bench.alerting.handle(inspection("2026-06-02T17:59:00Z", "2026-06-01T17:59:00Z"))
        schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", bench.web.app)
        headers = {"Authorization": f"Bearer {bench.tokens['admin']}"}
        operations = [op.ok() for op in schema.get_all_operations()]
        assert len(operations) >= 8
        for operation in operations:
            @given(case=operation.as_strategy())
            @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case):
                case.call_and_validate(headers=headers)

            run()
    finally:
        bench.close()
