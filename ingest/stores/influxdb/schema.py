"""The InfluxDB schema ms4watch writes: measurement names, tag keys, field types.

One measurement per *kind of record*, not per quantity: every reading of every quantity
goes to ``reading`` with a ``quantity`` tag (see ``docs/store.md`` for the reasons). Tags
hold only bounded identifiers (station, device, sensor, quantity, the canonical unit,
alert kinds); sequence numbers, flags and free text are fields.

A reading is identified by its series (tag set) and its time, so writing the same reading
twice overwrites it with identical values: duplicates are stored once without a lookup.
Records whose state changes later (an alert episode closing, an inspection recorded, an
incident resolved) are written again at their *original* timestamp with the new field
values, which InfluxDB merges into the same point.
"""

from __future__ import annotations

from datetime import timedelta

# Retention the law needs records kept for (REGULATIONS.md: 3 years), rounded up to whole days.
MIN_RETENTION = timedelta(days=1096)

READING = "reading"
"""tags: station, device, sensor, quantity, unit · fields: value (float, canonical unit; absent
when the sensor failed), flags (string, comma-separated QualityFlag values, "" when clean),
seq (integer, the message's per-device sequence number)."""

DEVICE_STATUS = "device_status"
"""tags: station, device · fields: online (integer 1/0), state (string), battery_v, signal_dbm,
uptime_s (float), spool_depth, dropped (integer), clock_synced (integer 1/0),
agent_version, config_version (string). Written from each status message."""

ALERT = "alert"
"""tags: kind (dry_weather_flow, turbidity_contrast, storm, …), station (outfall, pair, gauge or
site id) · time: episode start · fields: open (integer 1/0), value (float: peak_gpm,
max_delta_ntu, depth_in), text (string), suppressed (string, "" when not), end (string ISO or "")."""

INCIDENT = "incident"
"""tags: kind, station · time: when opened · fields: incident_id (string), state (string:
open, acknowledged, resolved), open (integer 1/0), by (string)."""

STORM = "storm"
"""tags: gauge · time: storm start · fields: depth_in, duration_h (float), qualifying (boolean),
end (string ISO), open (integer 1/0 while still raining)."""

INSPECTION = "inspection"
"""tags: site, gauge · time: end of the storm that made it due (routine ones: the due time
minus 24 h) · fields: due (string ISO), state (string: due, recorded, overdue),
recorded (string ISO or ""), overdue (integer 1/0), reason (string: storm or routine)."""

CALIBRATION = "calibration"
"""tags: station, device, sensor · time: when ingest received the status message · fields:
due, performed (string YYYY-MM-DD), days_left (float, whole days from the received day to due;
0 on the due day, negative when overdue). Written from each status message's calibrations."""

DEVICE_EVENT = "device_event"
"""tags: station, device, kind (an id: cmd_ack, calibration, sample_taken, …) · time: the event's
own time (milliseconds, as the logger sends it) plus ``digest mod 10^6`` ns, so two events of
one kind in the same millisecond stay two points and a redelivery overwrites its own ·
fields: data (string, the event's JSON), digest (integer), received_ns (integer)."""

CALIBRATION_RECORD = "calibration_record"
"""tags: station, device, sensor, procedure · time: when the run ended (``performed``) · fields:
id, result (pass/fail), technician, next_due (YYYY-MM-DD), fit (string), slope, offset (float;
absent for a piecewise fit), worst_as_found_pct, worst_as_left_pct (float), record (string,
the whole record as JSON). One point per ``ms4watch calibrate`` run: the calibration history."""

RECEIPT = "receipt"
"""tags: station · time: when the store wrote the batch (ingest's clock) · fields: first_ns,
last_ns (integer, the span of the batch's reading times of that station [epoch ns]). One point
per written batch and station, sent with its readings: after a crash the alert engine is re-fed
with what was stored after its last checkpoint, however old the readings' times."""

MEASUREMENTS = (READING, RECEIPT, DEVICE_STATUS, ALERT, INCIDENT, STORM, INSPECTION, CALIBRATION, DEVICE_EVENT,
                CALIBRATION_RECORD)
