"""The order in which `make test`'s workers take test files: longest first.

Why: `make test` runs ``-n $(PYTEST_WORKERS) --dist loadfile``: a file's tests stay on one worker
(they share a module-scoped deployment), and a worker takes the next file when its
current one is almost done. A long file that starts last sets the run's length while
the other workers sit idle, so files go longest first (the classic longest-processing-
time rule). xdist's own reordering (most tests first) is turned off in the Makefile
(``--no-loadscope-reorder``): it put one-test files, such as a benchmark's smoke, last.

How long a file takes comes from ``tests/file_durations.json``: seconds per file, from
a full run (``make test`` writes ``build/test-durations.json``; ``make durations``
copies it here). A file the record does not know yet, a new one, is placed by its
markers. Only the order depends on the record: a stale one makes a run slower, never
wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

RECORD = Path(__file__).with_name("file_durations.json")
# Seconds assumed for a file missing from the record, by its heaviest marker.
FALLBACK_SECONDS = {"slow": 120.0, "terraform": 60.0, "integration": 20.0}
UNIT_SECONDS = 1.0


def file_of(nodeid: str) -> str:
    """The test file part of a node id (``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def load_record(path: Path = RECORD) -> dict[str, float]:
    """The recorded seconds per file (empty when there is no record)."""
    return json.loads(path.read_text()) if path.is_file() else {}


def estimate(markers: Iterable[str], recorded: float | None) -> float:
    """A file's expected seconds: the record's, else the fallback of its markers."""
    if recorded is not None:
        return recorded
    return max((FALLBACK_SECONDS.get(m, UNIT_SECONDS) for m in markers), default=UNIT_SECONDS)


def longest_first(
    nodeids: list[str], markers: Mapping[str, set[str]], recorded: Mapping[str, float]
) -> list[str]:
    """``nodeids`` ordered file by file, longest expected file first.

    ``markers`` maps each file to the markers of its tests. The sort is stable, so
    tests keep their order within a file and files of equal estimate keep
    collection order.
    """
    expected = {f: estimate(markers.get(f, set()), recorded.get(f)) for f in markers}
    return sorted(nodeids, key=lambda nodeid: -expected.get(file_of(nodeid), UNIT_SECONDS))


def write_record(seconds: Mapping[str, float], path: Path) -> None:
    """Write seconds per file, rounded, sorted by file (a stable, reviewable diff)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {f: round(s, 1) for f, s in sorted(seconds.items())}
    path.write_text(json.dumps(document, indent=1) + "\n")
