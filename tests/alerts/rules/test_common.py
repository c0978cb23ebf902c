"""The rules' small helpers, against their plain definitions (issue 10 made them cheaper)."""

from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ms4watch.alerts.rules._common import open_run_start, runs, td_ns


@given(st.lists(st.booleans(), max_size=60))
def test_runs_are_the_first_and_last_positions_of_each_run_of_true(cond):
    starts, ends = [], []
    for i, c in enumerate(cond):
        if c and (i == 0 or not cond[i - 1]):
            starts.append(i)
        if c and (i == len(cond) - 1 or not cond[i + 1]):
            ends.append(i)
    a, b = runs(np.array(cond, dtype=bool))
    assert (a.tolist(), b.tolist()) == (starts, ends)
    assert a.dtype == b.dtype == np.int64


@given(st.timedeltas(min_value=timedelta(days=-10**5), max_value=timedelta(days=10**5)))
def test_td_ns_is_pandas_nanoseconds(td):
    assert td_ns(td) == int(pd.Timedelta(td).value)
    assert td_ns(pd.Timedelta(td)) == int(pd.Timedelta(td).value)
    assert type(td_ns(td)) is int


@pytest.mark.parametrize("cond,times,gap,want", [
    ([], [], None, None),                                    # no readings
    ([True, True, False], [0, 5, 10], None, None),           # the last reading ends every run
    ([True, True, True], [0, 5, 10], None, 0),               # one run from the first reading
    ([True, False, True], [0, 5, 10], None, 2),              # a run of one reading: 0 min, still a run
    ([True, True, True], [0, 5, 200], 45, 2),                # a silence longer than the gap ends the run
    ([True, True, True], [0, 5, 50], 45, 0),                 # ... as long as the gap: it goes on
    ([True, True, True, True], [0, 100, 105, 300], 45, 3),   # the last silence decides
])
def test_open_run_start_is_the_first_reading_of_the_run_going_on_at_the_last(cond, times, gap, want):
    t = np.array(times, dtype=np.int64) * 60 * 10**9
    assert open_run_start(t, np.array(cond, dtype=bool), None if gap is None else gap * 60 * 10**9) == want
