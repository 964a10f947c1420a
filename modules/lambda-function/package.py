"""Deterministic Lambda deployment packages: the same bytes from any checkout.

Terraform compares ``source_code_hash`` with the zip's SHA-256; a zip that stores
file modification times, permission bits or ``__pycache__`` changes hash on every
fresh clone and shows a diff (terraform-aws-lambda's long-standing issue). Here a
zip's bytes depend only on the names and contents of the files it packs:

* entries sorted by archive path, every timestamp 1980-01-01 00:00:00;
* permissions normalized to 0644 (0755 for files executable in the source);
* no ``__pycache__``, ``*.pyc`` or editor droppings;
* stored, not deflated: deflate output differs between zlib builds, and Lambda
  packages of pure Python are small.

What goes in is a list of *sources*, as terraform-aws-lambda's ``source_path``:
each a directory or file (``path``), the glob ``patterns`` of the files to take
(relative to it; ``**`` spans directories, a leading ``!`` excludes) and an optional
``prefix_in_zip``. Third-party dependencies (pinned ``name==version``) are vendored
from wheels, installed once into a cache.

The module runs this file with a plain ``python3`` at plan time, so it uses the
standard library only and supports Python 3.9+::

    python3 package.py --out build/fn.zip --sources '[{"path": "src"}]'

It prints one JSON object: ``filename``, ``sha256``, ``base64sha256``, ``size``.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".git"}
SKIP_SUFFIXES = {".pyc", ".pyo", ".swp"}
SKIP_NAMES = {".DS_Store"}
# pip's install records: they name the installer, not the code, so leave them out.
SKIP_DIST_INFO = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


class PackageError(Exception):
    """A source that cannot be packaged: the message names it and what to do."""


class Source:
    """One ``source_path`` entry: a directory or file and the files to take from it.

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect`` and ``ast``,
    a third of this script's start, which Terraform pays once per function per plan.
    """

    __slots__ = ("path", "patterns", "prefix_in_zip")

    def __init__(
        self, path: Path, patterns: tuple[str, ...] = ("**",), prefix_in_zip: str = ""
    ) -> None:
        self.path = path
        self.patterns = patterns
        self.prefix_in_zip = prefix_in_zip

    @classmethod
    def parse(cls, spec: dict, base: Path) -> Source:
        """Build from the module's JSON (``path`` relative to ``base`` when not absolute)."""
        if not isinstance(spec, dict) or not spec.get("path"):
            raise PackageError(f"source {spec!r} needs a 'path'")
        patterns = tuple(spec.get("patterns") or ("**",))
        return cls(base / spec["path"], patterns, (spec.get("prefix_in_zip") or "").strip("/"))


@functools.cache
def glob_regex(pattern: str) -> re.Pattern:
    """``**`` matches across directories, ``*`` and ``?`` within one path component.

    Kept per pattern: every file of a source is tested against every pattern.
    """
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def selected(relative: str, patterns: tuple[str, ...]) -> bool:
    """Whether a file's path (relative to its source) passes the patterns, last match wins."""
    keep = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        if glob_regex(pattern.lstrip("!")).match(relative):
            keep = not negate
    return keep


def _walk(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield (path relative to root, file) for every packable file under ``root``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if Path(name).suffix in SKIP_SUFFIXES or name in SKIP_NAMES:
                continue
            if dirpath.endswith(".dist-info") and name in SKIP_DIST_INFO:
                continue
            file = Path(dirpath) / name
            yield file.relative_to(root).as_posix(), file


def source_files(source: Source) -> Iterator[tuple[str, Path]]:
    """(archive name, file) of every file a source selects."""
    if not source.path.exists():
        raise PackageError(f"source_path {source.path} does not exist")
    if source.path.is_file():
        candidates = [(source.path.name, source.path)]
    else:
        candidates = list(_walk(source.path))
    found = False
    for relative, file in candidates:
        if selected(relative, source.patterns):
            found = True
            yield (f"{source.prefix_in_zip}/{relative}" if source.prefix_in_zip else relative), file
    if not found:
        raise PackageError(
            f"source_path {source.path} with patterns {list(source.patterns)} selects no file"
        )


def _cache_dir() -> Path:
    base = os.environ.get("SFN_PATTERNS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sfn-patterns"
    )
    return Path(base)


def vendor(requirement: str) -> Path:
    """Install a pinned distribution (no dependencies, no bytecode) into the cache once."""
    name, _, version = requirement.partition("==")
    if not version:
        raise PackageError(f"requirement {requirement!r} must be pinned (name==version)")
    target = _cache_dir() / "vendor" / f"{name.lower()}-{version}"
    if not (target / ".complete").exists():
        import subprocess  # only here: a plan without requirements never starts pip

        staging = target.with_name(target.name + f".tmp{os.getpid()}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--no-compile",
                "--only-binary=:all:",
                "--target",
                str(staging),
                requirement,
            ],
            check=True,
            stdout=sys.stderr,
        )
        (staging / ".complete").write_text(requirement)
        if target.exists():  # another process finished first; its tree is identical
            subprocess.run(["rm", "-rf", str(staging)], check=True)
        else:
            staging.replace(target)
    return target


def package_files(
    sources: list[Source], requirements: tuple[str, ...] = ()
) -> list[tuple[str, Path]]:
    """Every (archive name, file) of a package, sorted; two files for one name fail."""
    entries: dict = {}
    vendored = [Source(vendor(r), ("**", "!.complete", "!bin/**")) for r in requirements]
    for source in [*sources, *vendored]:
        for arcname, file in source_files(source):
            if arcname in entries and entries[arcname] != file:
                raise PackageError(f"{arcname} is packed twice ({entries[arcname]} and {file})")
            entries[arcname] = file
    return sorted(entries.items())


def build_zip(files: list[tuple[str, Path]]) -> bytes:
    """Zip the files with fixed timestamps and normalized permissions."""
    import io
    import zipfile  # imported here: a plan whose zips are current never builds one

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for arcname, file in files:
            info = zipfile.ZipInfo(arcname, date_time=FIXED_DATE_TIME)
            mode = 0o755 if file.stat().st_mode & stat.S_IXUSR else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.create_system = 3  # Unix, so the permission bits above are honoured
            info.compress_type = zipfile.ZIP_STORED
            archive.writestr(info, file.read_bytes())
    return buffer.getvalue()


def inputs_stamp(files: list[tuple[str, Path]]) -> str:
    """A digest of every packed file's archive name, path, size, mtime and exec bit.

    Equal stamps mean the zip would come out the same: its bytes depend only on the
    names, contents and exec bits, and a content change moves size or mtime.
    """
    lines = []
    for arcname, file in files:
        st = file.stat()
        lines.append(f"{arcname}\0{file}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_mode & 0o100}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def build(sources: list[Source], out: Path, requirements: tuple[str, ...] = ()) -> dict:
    """Write the zip to ``out`` (only if its bytes changed) and describe it.

    Terraform runs this at every plan, apply and destroy, once per function. When no
    packed file changed since the zip was written (same :func:`inputs_stamp`, the zip
    untouched since), the description saved beside it (``.<zip>.json``) is the answer:
    no file is read or zipped again (about half of a run's CPU; the other half is the
    interpreter's start).
    """
    files = package_files(sources, requirements)
    stamp = inputs_stamp(files)
    record = out.with_name(f".{out.name}.json")
    try:
        kept = json.loads(record.read_text())
        zipped = out.stat()
        if (kept["stamp"], kept["zip"]) == (stamp, [zipped.st_size, zipped.st_mtime_ns]):
            return kept["result"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no record yet, or an unreadable one: build
    data = build_zip(files)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.exists() or out.read_bytes() != data:
        staging = out.with_name(f".{out.name}.{os.getpid()}")
        staging.write_bytes(data)
        staging.replace(out)
    digest = hashlib.sha256(data).digest()
    result = {
        "filename": str(out.resolve()),
        "sha256": digest.hex(),
        "base64sha256": base64.b64encode(digest).decode(),
        "size": str(len(data)),
    }
    zipped = out.stat()
    staging = record.with_name(f"{record.name}.{os.getpid()}")
    staging.write_text(
        json.dumps({"stamp": stamp, "zip": [zipped.st_size, zipped.st_mtime_ns], "result": result})
    )
    staging.replace(record)
    return result


def main(argv: list[str] | None = None) -> int:
    """Command line used by Terraform: print one JSON object describing the zip."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        epilog='example: package.py --out build/fn.zip --sources \'[{"path": "src", '
        '"patterns": ["**/*.py", "!tests/**"]}]\' --requirement pynamodb==6.1.0',
    )
    parser.add_argument("--out", required=True, type=Path, help="the zip file to write")
    parser.add_argument(
        "--sources",
        required=True,
        help='JSON list of {path, patterns (default ["**"]), prefix_in_zip (default "")}',
    )
    parser.add_argument(
        "--base", type=Path, default=Path.cwd(), help="directory relative paths start from"
    )
    parser.add_argument(
        "--requirement",
        action="append",
        default=[],
        help="a pinned distribution (name==version) to vendor into the zip; repeatable",
    )
    parser.add_argument(
        "--expect-base64sha256",
        metavar="HASH",
        help="fail unless the zip has this hash (the apply-time rebuild of a planned zip)",
    )
    args = parser.parse_args(argv)
    try:
        sources = [Source.parse(spec, args.base) for spec in json.loads(args.sources)]
        if not sources:
            raise PackageError("no sources given: set source_path")
        result = build(sources, args.out, tuple(args.requirement))
        expected = args.expect_base64sha256
        if expected and result["base64sha256"] != expected:
            raise PackageError(
                f"{args.out}: the sources changed since the plan (the plan packed "
                f"{expected}, they now pack {result['base64sha256']}); run terraform plan again"
            )
        print(json.dumps(result))
    except (PackageError, json.JSONDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
