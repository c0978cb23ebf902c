"""The town's storm-sewer map: structures and conveyances imported from GIS layers or an
EPA SWMM model, checked, kept per town, and traced up from an outfall or down to one.

Modules: ``model`` (typed values), ``mapping`` (the town's mapping file), ``gis`` and
``swmm`` (readers), ``build`` (snapping ends to structures, directing pipes), ``checks``
(what could not be connected), ``store`` (SQLite per town, changes between imports),
``trace`` (upstream and downstream walks).
"""

FILENAME = "network.db"
"""The town's kept map in its data folder (``store``); here so that looking for it (``current``)
imports nothing of the map's model."""
