#!/usr/bin/env python3
"""Run a static check, or replay its passing output when nothing it reads has changed.

Why: checkov takes about 80 CPU-seconds per `make test` (its graph renders every
variable of every module call), on a 2-core machine whose tests are bound by CPU. Its
result depends only on its version and arguments and on the files it reads, so, like
ruff's cache or dbt's partial parsing, a passing result is kept under a key made of
exactly those, and replayed while they are unchanged. A failing result is never kept:
a check that failed runs again. ``SFN_PATTERNS_NO_CHECK_CACHE=1`` always runs it.

The inputs are found the way the check finds them: every file under ``--root`` whose
name ends in one of ``--suffix``, minus directories and files matching a ``--skip``
regular expression (the same expressions the check is given) and ``.git``.

Usage:
  cached_check.py --name checkov --root . --suffix .tf --skip '\\.venv/' -- CMD [ARG ...]

Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path


def inputs(root: Path, suffixes: tuple[str, ...], skips: list[re.Pattern[str]]) -> list[str]:
    """Paths (relative to ``root``, sorted) of the files the check reads."""
    found = []
    for directory, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        prefix = "" if rel_dir == "." else rel_dir + "/"
        dirs[:] = sorted(
            d for d in dirs if d != ".git" and not any(s.search(f"{prefix}{d}/") for s in skips)
        )
        for name in files:
            path = prefix + name
            if name.endswith(suffixes) and not any(s.search(path) for s in skips):
                found.append(path)
    return sorted(found)


def key(root: Path, files: list[str], command: list[str], env_names: list[str]) -> str:
    """SHA-256 over the command, the named environment variables and every input's content.

    The command's executable counts by its resolved path, which names the check's
    version here (``$SFN_PATTERNS_CACHE/checkov-3.3.30/bin/checkov``).
    """
    digest = hashlib.sha256()
    executable = shutil.which(command[0])
    digest.update(os.path.realpath(executable or command[0]).encode() + b"\0")
    for part in command:
        digest.update(part.encode() + b"\0")
    for name in env_names:
        digest.update(f"{name}={os.environ.get(name, '')}\0".encode())
    for path in files:
        digest.update(path.encode() + b"\0")
        digest.update(hashlib.sha256((root / path).read_bytes()).digest())
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Replay or run; exit with the check's status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True, help="the check's name (its cache directory)")
    parser.add_argument("--root", type=Path, default=Path("."), help="the tree the check reads")
    parser.add_argument(
        "--suffix", action="append", required=True, help="an input's name ends in this"
    )
    parser.add_argument(
        "--skip", action="append", default=[], help="a regular expression of paths not read"
    )
    parser.add_argument(
        "--env", action="append", default=[], help="an environment variable the result depends on"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the check's command")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the check's command after --")

    cache_root = Path(os.environ.get("SFN_PATTERNS_CACHE", Path.home() / ".cache" / "sfn-patterns"))
    files = inputs(args.root, tuple(args.suffix), [re.compile(s) for s in args.skip])
    digest = key(args.root, files, command, args.env)
    stored = cache_root / "check-results" / args.name / f"{digest}.log"
    if stored.is_file() and os.environ.get("SFN_PATTERNS_NO_CHECK_CACHE") != "1":
        print(
            f"{args.name}: none of its {len(files)} input files, its version or its arguments "
            f"changed since this passing run (key {digest[:12]}; "
            "SFN_PATTERNS_NO_CHECK_CACHE=1 runs it again):"
        )
        sys.stdout.write(stored.read_text())
        return 0
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode == 0:
        stored.parent.mkdir(parents=True, exist_ok=True)
        partial = stored.with_name(f"{stored.name}.{os.getpid()}.tmp")  # concurrent runs
        partial.write_text(proc.stdout)
        partial.replace(stored)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
