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

Third-party dependencies a handler needs beyond the runtime's boto3 (for example
pynamodb) are vendored from pinned wheels, installed once into a cache.

This module uses the standard library only, because Terraform runs it with a plain
``python3`` at plan time (``python3 packaging.py --bundle NAME --out DIR``).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LAMBDA_SRC = Path(__file__).resolve().parent.parent
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
SKIP_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
SKIP_SUFFIXES = {".pyc", ".pyo", ".swp"}
SKIP_NAMES = {".DS_Store"}
# pip's install records: they name the installer, not the code, so leave them out.
SKIP_DIST_INFO = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


@dataclass(frozen=True)
class Bundle:
    """One Lambda deployment package.

    ``sources`` are paths under ``lambda_src/``; ``requirements`` are pinned
    distributions (``name==version``) vendored into the zip's root.
    """

    sources: tuple[str, ...]
    requirements: tuple[str, ...] = ()


# Every Lambda package this project ships. Handlers import only what is listed
# here (plus the runtime's boto3): the LocalStack harness enforces the same rule.
BUNDLES: dict[str, Bundle] = {
    "smoke": Bundle(sources=("sfn_patterns/__init__.py", "sfn_patterns/smoke")),
    "job-poller": Bundle(sources=("sfn_patterns/__init__.py", "sfn_patterns/job_poller")),
    "semaphore": Bundle(sources=("sfn_patterns/__init__.py", "sfn_patterns/semaphore")),
    "sqs-throttle": Bundle(sources=("sfn_patterns/__init__.py", "sfn_patterns/sqs_throttle")),
    "dag-aggregate": Bundle(
        sources=(
            "sfn_patterns/__init__.py",
            "sfn_patterns/dag_aggregate/__init__.py",
            "sfn_patterns/dag_aggregate/runtime",
        )
    ),
}


def _cache_dir() -> Path:
    base = os.environ.get("SFN_PATTERNS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "sfn-patterns"
    )
    return Path(base)


def _walk(path: Path, arcbase: str) -> Iterator[tuple[str, Path]]:
    """Yield (archive name, file) for a file or every file under a directory."""
    if path.is_file():
        yield arcbase, path
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            if Path(name).suffix in SKIP_SUFFIXES or name in SKIP_NAMES:
                continue
            if dirpath.endswith(".dist-info") and name in SKIP_DIST_INFO:
                continue
            file = Path(dirpath) / name
            yield (Path(arcbase) / file.relative_to(path)).as_posix(), file


def vendor(requirement: str) -> Path:
    """Install a pinned distribution (no dependencies, no bytecode) into the cache once."""
    name, _, version = requirement.partition("==")
    if not version:
        raise ValueError(f"vendored requirement {requirement!r} must be pinned (name==version)")
    target = _cache_dir() / "vendor" / f"{name.lower()}-{version}"
    if not (target / ".complete").exists():
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


def bundle_files(bundle: Bundle, lambda_src: Path = LAMBDA_SRC) -> list[tuple[str, Path]]:
    """Every (archive name, file) of a bundle, sorted, with duplicates rejected."""
    entries: dict[str, Path] = {}
    roots = [(lambda_src / source, source) for source in bundle.sources]
    for requirement in bundle.requirements:
        tree = vendor(requirement)
        roots += [
            (child, child.name)
            for child in sorted(tree.iterdir())
            if child.name not in {".complete", "bin"}
        ]
    for path, arcbase in roots:
        if not path.exists():
            raise FileNotFoundError(f"bundle source {path} does not exist")
        for arcname, file in _walk(path, arcbase):
            if arcname in entries and entries[arcname] != file:
                raise ValueError(f"{arcname} is packed twice ({entries[arcname]} and {file})")
            entries[arcname] = file
    return sorted(entries.items())


def build_zip(files: list[tuple[str, Path]]) -> bytes:
    """Zip the files with fixed timestamps and normalized permissions."""
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


def build(name: str, out_dir: Path, lambda_src: Path = LAMBDA_SRC) -> dict[str, object]:
    """Write ``out_dir/<name>.zip`` (only if its bytes changed) and describe it."""
    if name not in BUNDLES:
        raise KeyError(f"unknown bundle {name!r}; known: {', '.join(sorted(BUNDLES))}")
    data = build_zip(bundle_files(BUNDLES[name], lambda_src))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{name}.zip"
    if not target.exists() or target.read_bytes() != data:
        staging = target.with_name(f".{target.name}.{os.getpid()}")
        staging.write_bytes(data)
        staging.replace(target)
    digest = hashlib.sha256(data).digest()
    return {
        "bundle": name,
        "filename": str(target.resolve()),
        "sha256": digest.hex(),
        "base64sha256": base64.b64encode(digest).decode(),
        "size": str(len(data)),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line used by Terraform: print one JSON object describing the zip."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bundle", required=True, choices=sorted(BUNDLES))
    parser.add_argument("--out", required=True, type=Path, help="directory for <bundle>.zip")
    args = parser.parse_args(argv)
    print(json.dumps(build(args.bundle, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
