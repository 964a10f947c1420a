"""scripts/cached_check.py: a passing check is replayed only while nothing it reads changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "cached_check.py"
# The "check": counts its runs in runs.txt, prints a line, exits with EXIT (default 0).
CHECK = (
    "import os, pathlib; p = pathlib.Path('runs.txt'); "
    "p.write_text(str(int(p.read_text() or 0) + 1) if p.exists() else '1'); "
    "print('scanned: 3 passed'); raise SystemExit(int(os.environ.get('EXIT', '0')))"
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "mod").mkdir(parents=True)
    (root / "mod" / "main.tf").write_text('resource "x" "y" {}\n')
    (root / "build").mkdir()
    (root / "build" / "gen.tf").write_text("generated\n")
    (root / "notes.md").write_text("not read\n")
    return root


ARGS = ["--name", "demo", "--suffix", ".tf", "--skip", "^build/", "--env", "EXIT"]


def check(root: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *ARGS, "--", sys.executable, "-c", CHECK],
        cwd=root,
        env={**os.environ, "SFN_PATTERNS_CACHE": str(root.parent / "cache"), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def runs(root: Path) -> int:
    return int((root / "runs.txt").read_text())


def test_a_passing_result_is_replayed_while_its_inputs_are_unchanged(tree: Path) -> None:
    first = check(tree)
    assert first.returncode == 0 and first.stdout == "scanned: 3 passed\n"
    second = check(tree)
    assert second.returncode == 0 and runs(tree) == 1
    banner, replayed = second.stdout.split("\n", 1)
    assert "none of its 1 input files" in banner and replayed == first.stdout


def test_files_it_does_not_read_do_not_matter(tree: Path) -> None:
    check(tree)
    (tree / "notes.md").write_text("changed\n")
    (tree / "build" / "gen.tf").write_text("changed, but skipped\n")
    check(tree)
    assert runs(tree) == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda root: (root / "mod" / "main.tf").write_text('resource "x" "z" {}\n'),
        lambda root: (root / "mod" / "new.tf").write_text("\n"),
        lambda root: (root / "mod" / "main.tf").rename(root / "mod" / "moved.tf"),
    ],
    ids=["edited", "added", "renamed"],
)
def test_a_changed_input_runs_the_check_again(tree: Path, change) -> None:
    check(tree)
    change(tree)
    check(tree)
    assert runs(tree) == 2


def test_a_failing_result_is_never_kept(tree: Path) -> None:
    assert check(tree, EXIT="1").returncode == 1
    assert check(tree, EXIT="1").returncode == 1
    assert runs(tree) == 2


def test_an_environment_variable_it_depends_on_is_part_of_the_key(tree: Path) -> None:
    check(tree)
    check(tree, EXIT="0 ")  # another value of EXIT, still a pass
    assert runs(tree) == 2


def test_the_variable_runs_it_whatever_the_cache_holds(tree: Path) -> None:
    check(tree)
    assert check(tree, SFN_PATTERNS_NO_CHECK_CACHE="1").stdout == "scanned: 3 passed\n"
    assert runs(tree) == 2
