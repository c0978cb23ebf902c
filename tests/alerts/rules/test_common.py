"""The rules' small helpers, against their plain definitions (issue 10 made them cheaper)."""

from datetime import timedelta

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from ms4watch.alerts.rules._common import runs, td_ns


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
