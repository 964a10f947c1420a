"""The record of every injected fault: in memory for the route, and a JSON lines file.

A fault test that fails must be replayable and explainable: which call got which
fault, when. The in-memory list serves ``GET /_sfnp/faults``; the file
(``SFNP_FAULTS_LOG``) survives LocalStack being killed at the end of a session.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

# Enough for the largest benchmark run; older entries are dropped first (the file
# keeps them all).
MAX_ENTRIES = 100_000


class Journal:
    """Injected faults, oldest first; thread-safe."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._entries: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.path = Path(path) if path else None

    def record(self, entry: dict[str, Any]) -> None:
        """Keep one entry (and append it to the file, when there is one)."""
        line = json.dumps(entry, sort_keys=True, default=str)
        with self._lock:
            self._entries.append(entry)
            if len(self._entries) > MAX_ENTRIES:
                del self._entries[: len(self._entries) - MAX_ENTRIES]
            if self.path is not None:
                with self.path.open("a") as out:
                    out.write(line + "\n")

    def entries(self) -> list[dict[str, Any]]:
        """A copy of the entries kept in memory."""
        with self._lock:
            return list(self._entries)

    def reset(self) -> None:
        """Forget the in-memory entries (a new plan starts a new record; the file stays)."""
        with self._lock:
            self._entries.clear()
