"""Logger configs (the logger's view of a station). ``demo/`` is shipped inside the package
so that ``ms4watch demo`` runs from any install; real loggers get their own file."""
