"""The simulated watershed the sim driver samples (edge/drivers/sim/world.py)."""

from __future__ import annotations

from ms4watch.edge.drivers.sim.world import MIN_NS, World

T0 = 1_780_315_200_000_000_000      # 2026-06-01T12:00:00Z


def test_a_time_is_its_minute_on_the_grid_held_to_the_grid():
    w = World(start_ns=T0, hours=2.0)
    assert w.n == 121
    assert [w.index(T0 + k) for k in (0, MIN_NS - 1, MIN_NS, 90 * MIN_NS + 5)] == [0, 0, 1, 90]
    assert w.index(T0 - 1) == 0 and w.index(T0 - 10**18) == 0                # before the world: its first minute
    assert w.index(T0 + 120 * MIN_NS) == 120 and w.index(T0 + 10**18) == 120  # after it: its last
    assert type(w.index(T0 + 3 * MIN_NS)) is int
