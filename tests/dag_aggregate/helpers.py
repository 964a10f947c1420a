"""Shared helpers: write SQL task directories for tests."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dag-aggregate" / "sql"


def write_sql(directory: Path, files: dict[str, str]) -> Path:
    """Write ``{table: sql}`` as ``<table>.sql`` files and return the directory."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, sql in files.items():
        (directory / f"{name}.sql").write_text(sql, encoding="utf-8")
    return directory
