"""The Redshift Data API (``redshift-data:duckdb``), served from an embedded DuckDB.

:mod:`.provider` speaks the API (statements, batches, results, events); :mod:`.engine`
runs the SQL and keeps each statement's state.
"""
