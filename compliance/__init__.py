"""Compliance records and the laws' clocks (issue 12): illicit-discharge cases, samples with
custody and lab results, responsible parties, notices of violation and stop-work orders,
release notices, SWPPP reviews, evidence packets and the annual report.

``laws.py`` holds each law as data (its clocks, the contents its notice of violation must
have, its penalties), ``clocks.py`` the pure functions that compute deadlines from it,
``store.py`` the town's ``compliance.db``; the workbench's services are the only writers.
"""
