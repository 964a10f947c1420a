#!/usr/bin/env python3
"""Fail when a tracked file speaks of how the project was built instead of what it does.

Why: the repository is a product. Labels of internal runs (a word and a run number),
numbered stops of the work, numbers in the project's own issue tracker and mentions of
the working session mean nothing to a user, go stale the day they are written, and crowd
out what the code does. Docs say what the code does; the CHANGELOG says what changed;
`git log` keeps the rest.

The phrases are the process's, not the words: "session" alone is a real word here (an
IAM role session, a pytest session, a botocore session), and so is "stop" (stop an
execution), so only the combinations below match. A line that needs one of them for a
real reason can say so with the marker ``process-words: allow`` on that line.

Usage:
  check_process_words.py            every file ``git ls-files`` lists (make fast-checks)
  check_process_words.py PATH ...   only those files

Exit 0 when nothing matched, 1 with one line per match (``file:line: phrase``), 2 on a
usage error. Standard library only.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each: (what it is, the expression). Case-insensitive, on one line at a time.
PHRASES: tuple[tuple[str, str], ...] = (
    ("a run label", r"\bverify\d+\b"),
    # Not an option (`--stop 0,1` names executions to stop in the interleaving explorer).
    (
        "a numbered stop of the work",
        r"(?<!-)\bstops?\s\d+(?:\s*(?:-|to|and)\s*\d+)?\b(?!\s*(?:s\b|ms\b|%))",
    ),
    ("a stop of the work", r"\bCI\s+of\s+stop\b|\bwork\s+periods?\b"),
    # An execution's stop ("each stop's event") is the product's word; a stop of the work
    # is named by the demonstratives below.
    ("a stop of the work", r"\b(?:this|that|next|previous|earlier)\s+stop's\b"),
    ("a stop of the work", r"\bthis\s+stop\b|\bearlier\s+stops\b|\bthe\s+stop\s+before\b"),
    ("the working session", r"\bthis\s+session(?:'s)?\b"),
    ("the working session", r"\bthis\s+pass\b|\bverify\s+run\b"),
    # "Issue" or "issues", a space and a number (the project's own tracker); a link to
    # another project's issue (https://github.com/OWNER/REPO/issues/123) has a slash.
    ("an internal issue number", r"\bissues?\s#?\d+\b"),
)
ALLOW_MARKER = "process-words: allow"
_COMPILED = tuple((label, re.compile(expr, re.IGNORECASE)) for label, expr in PHRASES)
# One pass per line first (every phrase at once); the labels only for a line that matched.
_ANY = re.compile("|".join(f"(?:{expr})" for _, expr in PHRASES), re.IGNORECASE)


def tracked_files(root: Path) -> list[Path]:
    """The files git tracks under ``root`` (the checker and its test included)."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    return [root / name for name in out.split("\0") if name]


def matches(lines: Iterable[str]) -> Iterator[tuple[int, str, str]]:
    """(line number, what it is, the matched text) of every process phrase in ``lines``."""
    for number, line in enumerate(lines, 1):
        if not _ANY.search(line) or ALLOW_MARKER in line:
            continue
        for label, pattern in _COMPILED:
            for found in pattern.finditer(line):
                yield number, label, found.group(0)


def check(paths: Iterable[Path], root: Path) -> list[str]:
    """One ``file:line: ...`` problem per match in the text files among ``paths``."""
    problems = []
    for path in paths:
        try:
            text = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            continue  # deleted in the work tree, or a submodule
        if b"\0" in text[:8192]:
            continue  # binary
        try:
            lines = text.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        try:
            shown = path.resolve().relative_to(root)
        except ValueError:
            shown = path
        for number, label, phrase in matches(lines):
            problems.append(f"{shown}:{number}: {label}: {phrase!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check the given files, or every tracked one; 1 when a phrase matched."""
    parser = argparse.ArgumentParser(
        description=(
            "Fail on words of the process that built the project (labels of internal "
            "runs, numbered stops of the work, internal issue numbers, mentions of the "
            "working session) in tracked files: the repository speaks of the product only."
        )
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="files to check (default: every file git tracks in the repository)",
    )
    args = parser.parse_args(argv)
    paths = args.paths or tracked_files(ROOT)
    problems = check(paths, ROOT)
    for problem in problems:
        print(problem)
    if problems:
        print(
            f"error: {len(problems)} process phrase(s) above: say what the code does, not how "
            "or when it was built (a run's history belongs in git log, a change in "
            f"CHANGELOG.md); a line that needs the words can carry '{ALLOW_MARKER}'",
            file=sys.stderr,
        )
        return 1
    print(f"no process phrases in {len(paths)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
