"""Campaigns: many runs, cached, on Dask, with progress — the one runner behind
``ccbench experiment``, ``ccbench reproduce`` and :func:`ccbench.sweep`.

``tasks.py`` (a run as a unit of work), ``cache.py`` (finished runs as Parquet, keyed by the
validated scenario and the core's version), ``runner.py`` (cache first, then Dask or this
process), ``progress.py`` (bar or plain lines), ``files.py`` (atomic writes),
``reproduce.py`` (every experiment of the works, then the report).
"""
