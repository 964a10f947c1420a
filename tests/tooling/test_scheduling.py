"""The order `make test`'s workers take files in: longest recorded first, new files by marker."""

from __future__ import annotations

import json
from pathlib import Path

from tests import scheduling


def test_files_go_longest_first_and_tests_keep_their_order_in_a_file() -> None:
    nodeids = ["a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "c.py::t2"]
    markers = {"a.py": set(), "b.py": set(), "c.py": set()}
    recorded = {"a.py": 5.0, "b.py": 300.0, "c.py": 40.0}
    assert scheduling.longest_first(nodeids, markers, recorded) == [
        "b.py::t1",
        "c.py::t1",
        "c.py::t2",
        "a.py::t1",
        "a.py::t2",
    ]


def test_a_file_missing_from_the_record_is_placed_by_its_heaviest_marker() -> None:
    nodeids = ["unit.py::t", "known.py::t", "new_slow.py::t", "new_ls.py::t"]
    markers = {
        "unit.py": set(),
        "known.py": set(),
        "new_slow.py": {"integration", "slow"},
        "new_ls.py": {"integration"},
    }
    recorded = {"known.py": 90.0}
    assert scheduling.longest_first(nodeids, markers, recorded) == [
        "new_slow.py::t",  # 120 s assumed
        "known.py::t",
        "new_ls.py::t",  # 20 s assumed
        "unit.py::t",
    ]


def test_the_record_round_trips_sorted_and_rounded(tmp_path: Path) -> None:
    path = tmp_path / "build" / "d.json"
    scheduling.write_record({"z.py": 1.26, "a.py": 3.0}, path)
    assert list(json.loads(path.read_text())) == ["a.py", "z.py"]
    assert scheduling.load_record(path) == {"a.py": 3.0, "z.py": 1.3}
    assert scheduling.load_record(tmp_path / "missing.json") == {}


def test_the_committed_record_names_only_existing_test_files() -> None:
    """A renamed or deleted file left in the record would hide a new file's real weight."""
    root = scheduling.RECORD.parents[1]
    recorded = scheduling.load_record()
    assert recorded, "tests/file_durations.json is missing: run make test, then make durations"
    missing = [f for f in recorded if not (root / f).is_file()]
    assert not missing, f"stale entries in tests/file_durations.json: {missing}"
