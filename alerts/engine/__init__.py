"""The streaming engine: readings in, events out, state on disk.

A thin layer over the same rule functions as replay (:mod:`..evaluate`). Each station's
readings are kept in a buffer (:mod:`.buffers`); after a batch, every subject (gauge,
outfall, turbidity pair, site, station) whose inputs changed is re-evaluated on its buffer
and the events that changed are returned (:mod:`.scheduler`). Its rules run unless what
changed provably cannot change its events (exact shortcuts, each in its subject's module:
``Gauges.storms_may_change``, ``Outfalls.flow_may_change``, ``Pairs.may_change``; an open
episode extended from the new readings alone, ``Outfalls.extend_open``; docs/rules.md,
*Streaming = replay*). Events are identified by ``id``: an update keeps its id (an
episode that closes, a storm that grows, then is confirmed), and an event that late data
disproves is returned once more with ``status = retracted``.

Out of order, duplicates, backlogs: a reading is kept by (station, quantity, time); the
same reading twice changes nothing. A station's *horizon* is its latest reading minus
``rules.lateness``: readings older than that are assumed complete, events that ended well
before it are final (frozen) and the buffer before them is dropped. A backlog after an
outage is not late for its own station as long as it arrives before the station's new
readings (the edge spool drains oldest first), so it is handled exactly. A reading older
than the part of the buffer still kept is counted in ``late_dropped`` and left out. A
station that has never reported (a dead gauge among several, a missing upstream probe) is
absent: it holds no subject's horizon back, and its first readings, should they come later
as a backlog, do not reopen events the other stations' data made final. So is a station gone
silent, once its latest reading is more than ``lateness`` + ``dry_lookback`` before the latest
of the subject's other stations (``buffers.held``): a dead gauge would otherwise keep its
outfalls' readings for ever (issue 21).

Property (tests/alerts/test_engine_property.py): for any readings, fed in any order within
the lateness window, duplicated or in backlogs, the final version of every event equals
replay over the sorted readings.

Modules: ``buffers`` (Series, Times, Change), ``state`` (Subject; the state file),
``scheduler`` (StreamingEngine), one per kind of subject: ``gauge``, ``outfall``, ``pair``,
``station``, ``site``.
"""

from .buffers import BIG, NEVER, Change, Series, Times
from .scheduler import StreamingEngine
from .state import STATE_VERSION, Subject

__all__ = ["StreamingEngine", "STATE_VERSION", "Series", "Times", "Change", "Subject", "BIG", "NEVER"]
