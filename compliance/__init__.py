"""Compliance records and the laws' clocks (issue 12): illicit-discharge cases, samples with
custody and lab results, responsible parties, notices of violation and stop-work orders,
release notices, SWPPP reviews, evidence packets and the annual report.

``laws.py`` holds each law as data (its clocks, the contents its notice of violation must
have, its penalties), ``calendar.py`` New York's business days (GCL § 24 holidays, the
town's office closures), ``clocks.py`` the pure functions that compute deadlines from it
(each a ``contract.due.Due``, rendered only by ``contract.duetext``),
``store.py`` the town's ``compliance.db``; the workbench's services are the only writers.
"""
