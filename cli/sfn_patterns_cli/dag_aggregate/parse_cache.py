"""A parse cache like dbt's partial parsing: an unchanged file is never parsed twice.

Each entry is keyed by the SHA-256 of a file's content; the whole cache is keyed by
the planner's version (the package version, a hash of the parsing code and the
sqlglot version), so a new planner never trusts an old parse. Entries hold only
what :func:`sql_deps.parse_sql` derives from the text (table references with
lines, or the parse error), never anything that depends on other files, the schema
or the options: resolution runs on every plan, so the result is identical with and
without the cache.

One JSON file per SQL directory (named by a hash of its absolute path) in the cache
directory, rewritten atomically when something changed; entries of files that no
longer exist are dropped then. A cache that cannot be read is ignored and rebuilt:
it can only make planning faster, never different.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Collection
from functools import lru_cache
from pathlib import Path
from typing import Any

CACHE_ENV = "SFN_PATTERNS_DAG_CACHE"
FORMAT = 1


def default_cache_dir() -> Path:
    """``$SFN_PATTERNS_DAG_CACHE``, else ``$XDG_CACHE_HOME/sfn-patterns/dag-parse``.

    (``~/.cache/sfn-patterns/dag-parse`` without XDG_CACHE_HOME.)
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sfn-patterns" / "dag-parse"


@lru_cache(maxsize=1)
def planner_version() -> str:
    """What a cached parse depends on besides the file: this code and sqlglot."""
    from importlib import metadata

    from sfn_patterns_cli import __version__

    here = Path(__file__).resolve().parent
    code = hashlib.sha256()
    for name in ("sql_deps.py", "parse_cache.py"):
        code.update((here / name).read_bytes())
    try:
        sqlglot = metadata.version("sqlglot")
    except metadata.PackageNotFoundError:  # pragma: no cover - a vendored sqlglot
        import sqlglot as module

        sqlglot = str(getattr(module, "__version__", "unknown"))
    return f"{__version__}+{code.hexdigest()[:12]}+sqlglot{sqlglot}+f{FORMAT}"


class ParseCache:
    """The parse results of one SQL directory (see the module docstring)."""

    def __init__(self, directory: Path, sql_dir: Path) -> None:
        self.directory = Path(directory)
        digest = hashlib.sha256(str(Path(sql_dir).resolve()).encode()).hexdigest()[:16]
        self.path = self.directory / f"parse-{digest}.json"
        self.version = planner_version()
        self.entries: dict[str, Any] = {}
        self.hits = 0
        self.misses = 0
        self._dirty = False
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("version") == self.version:
            entries = data.get("entries")
            if isinstance(entries, dict):
                self.entries = entries

    def get(self, sha256: str) -> dict[str, Any] | None:
        """The cached parse of content with this hash, or None."""
        entry = self.entries.get(sha256)
        if isinstance(entry, dict) and ("refs" in entry or "error" in entry):
            self.hits += 1
            return entry
        self.misses += 1
        return None

    def put(self, sha256: str, entry: dict[str, Any]) -> None:
        """Remember a parse result (written by :meth:`save`)."""
        self.entries[sha256] = entry
        self._dirty = True

    def save(self, keep: Collection[str]) -> None:
        """Write the cache if anything changed, keeping only entries in ``keep``."""
        stale = set(self.entries) - set(keep)
        for key in stale:
            del self.entries[key]
        if not (self._dirty or stale):
            return
        text = json.dumps({"version": self.version, "entries": self.entries}, separators=(",", ":"))
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temp = tempfile.mkstemp(dir=self.directory, prefix=".parse-", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temp, self.path)  # atomic: a concurrent plan reads old or new
        except OSError:
            # A read-only or full cache directory only costs speed.
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(temp)
        self._dirty = False
