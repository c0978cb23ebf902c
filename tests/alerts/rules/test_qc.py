"""QC: the ioos_qc tests are asked only when a reading may fail them, and the bound the
streaming engine's shortcuts use (surely_passes) never passes a reading that fails."""

from datetime import timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ms4watch.alerts.rules.qc import (FAIL, QcParams, _flags, flat_line_fail, qartod_fail_array, surely_passes,
                                      wire_flags_bad)

P = QcParams(fail_span=(0.0, 4000.0), spike_fail=200.0, flat_line_fail=timedelta(minutes=30))
MIN = 60 * 10**9

# values at the edges: the gross range, a spike of exactly the threshold, repeated values, NaN
VALUES = st.one_of(st.sampled_from([0.0, -0.1, 4000.0, 4000.5, 10.0, 210.0, 410.0, float("nan")]),
                   st.floats(-5, 4100, allow_nan=False))
FLAGS = st.sampled_from(["", "", "", "spike", "sensor_error,range", "ok"])


def reference(t, v, p):
    """qartod_fail_array as it was: ioos_qc's gross range and spike tests asked every time."""
    from ioos_qc import qartod
    gross = _flags(qartod.gross_range_test(v, fail_span=p.fail_span))
    spike = _flags(qartod.spike_test(v, suspect_threshold=p.spike_fail / 2, fail_threshold=p.spike_fail))
    return (gross == FAIL) | (spike == FAIL) | flat_line_fail(t, v, int(p.flat_line_fail.total_seconds() * 1e9),
                                                               p.flat_line_tolerance)


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=12), st.data())
def test_asking_ioos_qc_only_when_a_reading_may_fail_changes_nothing(values, data):
    v = np.array(values, dtype=float)
    if data.draw(st.booleans()):          # a steady series with one bump (the common case: no call)
        v = 10.0 + np.arange(v.size) * 0.5
        v[data.draw(st.integers(0, v.size - 1))] += data.draw(st.sampled_from([150.0, 199.9, 200.0, 400.0, 400.2]))
    t = np.arange(v.size, dtype=np.int64) * 5 * MIN
    assert qartod_fail_array(t, v, P).tolist() == reference(t, v, P).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(VALUES, FLAGS), min_size=1, max_size=8), st.data())
def test_a_reading_that_surely_passes_passes(rows, data):
    v = np.array([x for x, _ in rows], dtype=float)
    flags = np.array([f for _, f in rows], dtype=object)
    t = np.arange(v.size, dtype=np.int64) * 5 * MIN
    fails = qartod_fail_array(t, v, P) | wire_flags_bad(flags)
    for i in range(v.size):
        if surely_passes(v.tolist(), i, flags[i], P):
            assert not fails[i], (v.tolist(), flags.tolist(), i)


def test_surely_passes_is_not_sure_at_the_thresholds():
    assert surely_passes([10.0, 11.0, 12.0], 1, "", P)
    assert not surely_passes([10.0, 210.0, 10.0], 1, "", P)          # exactly the spike threshold
    assert not surely_passes([10.0, 10.0, 12.0], 1, "", P)           # a flat segment may go on
    assert not surely_passes([10.0, 4000.0], 1, "", P)               # the edge of the gross range
    assert not surely_passes([10.0, 11.0], 1, "calibration_overdue", P)
    assert surely_passes([10.0, 11.0], 1, "ok", P)                   # a flag that is not a QC failure
