"""Calibrating the logger's sensors in the field (``ms4watch calibrate``).

* :mod:`.fits`, :mod:`.ratings`, :mod:`.procedures` — pure: fits, reference flows and
  volumes from primary devices (cited, units in every name), and what a run decides;
* :mod:`.pause` — taking a sensor from the running agent and giving it back;
* :mod:`.session` — one run's resources: the sensor's driver, the spool, the config file;
* :mod:`.runs`, :mod:`.prompts` — the steps with a technician (terminal or JSON lines);
* :mod:`.configfile` — the new coefficients into the config file, versioned.

Acceptance limits and the record itself are shared with the server:
:mod:`ms4watch.contract.calibration`.
"""
