#!/usr/bin/env python
"""Write, once, the bytecode every `make test` worker would otherwise compile for itself.

Why: a fresh clone has a fresh virtualenv (bootstrap installs it without bytecode) and
no assertion-rewritten test modules. `make test`'s workers start at the same moment,
and each of them, and each LocalStack they start, compiles the same modules. Measured
on a 2-core machine in a fresh clone's venv: eight cold test collections at
once took 81 CPU-seconds, one collection and then eight 10 + 29; eight cold LocalStack
starts at once 65, one start and then eight 9 + 27; eight LocalStacks each started and
called once per service the suite uses 80, after this script 50 (the script: 27).

So `make test` runs this first: one `pytest --collect-only` (pytest writes each test
module's assertion-rewritten bytecode, and Python the bytecode of what the tests
import) while two processes write the bytecode of the packages LocalStack imports
(``compileall``).
In a checkout that ran before, both find everything current in a few seconds.

Examples::

    .venv/bin/python scripts/warm_bytecode.py            # what make test runs
    .venv/bin/python scripts/warm_bytecode.py --no-collect
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import subprocess
import sys
import sysconfig
import time
import warnings
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What an in-process LocalStack and its Lambda executor import: the packages that had
# bytecode after one LocalStack start and a first call of each service the suite uses,
# in a venv without any (the tests' own imports aside: the collection covers those),
# plus the single-file modules beside them. A package missing from the venv is skipped.
PACKAGES = (
    "localstack",
    "moto",
    "twisted",
    "botocore",
    "boto3",
    "s3transfer",
    "docker",
    "dns",
    "dnslib",
    "cryptography",
    "antlr4",
    "pydantic",
    "pydantic_settings",
    "werkzeug",
    "urllib3",
    "rolo",
    "openapi_core",
    "openapi_spec_validator",
    "openapi_schema_validator",
    "jsonschema",
    "jsonschema_path",
    "referencing",
    "pathable",
    "pyasn1",
    "jpype",
    "jsonpath_ng",
    "jmespath",
    "requests",
    "charset_normalizer",
    "idna",
    "yaml",
    "attr",
    "attrs",
    "dill",
    "dateutil",
    "plux",
    "h2",
    "h11",
    "hpack",
    "wsproto",
    "zope",
    "awscrt",
    "service_identity",
    "duckdb",
    "sqlglot",
    "pynamodb",
    "localstack_client",
)
# The project's own sources (editable installs: their bytecode goes next to them).
SOURCES = ("harness", "lambda_src", "cli")


def package_dirs(names: Iterable[str]) -> list[Path]:
    """The directory of each importable package in ``names`` (found, not imported)."""
    found = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found.extend(Path(p) for p in spec.submodule_search_locations)
    return found


def python_files(dirs: Iterable[Path]) -> list[str]:
    """Every ``.py`` file under ``dirs``."""
    return [str(path) for directory in dirs for path in sorted(directory.rglob("*.py"))]


def site_modules() -> list[str]:
    """The single-file modules of the venv's site-packages (``six.py``, ...)."""
    site = Path(sysconfig.get_paths()["purelib"])
    return [str(path) for path in sorted(site.glob("*.py"))]


def _compile(path: str) -> bool:
    # compile_file skips a file whose bytecode is current (its header says so). The
    # SyntaxWarnings of other projects' sources (LocalStack's invalid escapes, which 3.13
    # reports at compile time) are theirs, and importing the bytecode repeats none.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return bool(compileall.compile_file(path, quiet=2))


def compile_files(files: list[str], workers: int = 2) -> int:
    """Write missing or stale bytecode of ``files``; how many did not compile.

    Two processes beside the collection: with three on two cores, both stay busy until
    the end (the collection alone ends first).
    """
    with ProcessPoolExecutor(workers) as pool:
        return sum(1 for ok in pool.map(_compile, files, chunksize=200) if not ok)


def uv_archives(cache: Path) -> list[tuple[Path, Path]]:
    """The unpacked wheels in uv's ``cache`` without bytecode yet, each with its marker.

    uv installs a wheel by linking each file of its unpacked copy (``archive-v0/<id>``)
    into the venv, hardlinks where the cache and the venv share a filesystem, and it
    links a ``__pycache__`` found there too. Bytecode written once into the cache so
    comes with every later venv, a fresh clone's included: Python checks a ``.pyc``
    against its source's mtime and size, which a hardlink shares (and on load it names
    the venv's path in tracebacks, not the cache's). The marker (beside the cache, not
    in the unpacked wheel, whose every file uv would link) says a directory was done.
    """
    # Versioned: what a directory gets compiled has changed once (not *.data since 2).
    done = cache.parent / f"{cache.name}-bytecode-2"
    archives = cache / "archive-v0"
    if not archives.is_dir():
        return []
    return [
        (directory, done / directory.name)
        for directory in sorted(archives.iterdir())
        if directory.is_dir() and not (done / directory.name).exists()
    ]


def importable_parts(wheel: Path) -> list[Path]:
    """The package directories of an unpacked wheel.

    Its single-file modules are compiled beside them (:func:`compile_uv_cache`). Not
    its ``*.data`` directory: uv refuses a wheel whose ``.data/scripts`` holds a
    directory ("Wheel contains an invalid entry (directory) in the `scripts`
    directory"), which a ``__pycache__`` there is. Nor its ``*.dist-info``.
    """
    return [
        part
        for part in sorted(wheel.iterdir())
        if part.is_dir() and not part.name.endswith((".data", ".dist-info"))
    ]


def compile_uv_cache(cache: Path) -> int:
    """Compile the bytecode of uv's unpacked wheels not compiled before; how many."""
    todo = uv_archives(cache)
    if not todo:
        return 0
    print(
        f"    writing the bytecode of {len(todo)} unpacked wheels into uv's cache, once",
        file=sys.stderr,
    )
    parts = [part for directory, _ in todo for part in importable_parts(directory)]
    modules = [str(path) for directory, _ in todo for path in sorted(directory.glob("*.py"))]
    compile_files(python_files(parts) + modules)
    for _, marker in todo:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    return len(todo)


def main(argv: list[str] | None = None) -> int:
    """Start the collection, compile the packages meanwhile, wait for both."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Run by make test before its workers start; safe to run any time.",
    )
    parser.add_argument(
        "--no-collect",
        action="store_true",
        help="skip the test collection (pytest --collect-only), compile the packages only",
    )
    parser.add_argument(
        "--uv-cache",
        type=Path,
        metavar="DIR",
        help="instead: write the bytecode of the unpacked wheels in uv's cache DIR that "
        "have none yet, so every later venv uv installs from it links them (bootstrap)",
    )
    args = parser.parse_args(argv)
    if args.uv_cache is not None:
        compile_uv_cache(args.uv_cache)
        return 0
    started = time.monotonic()
    collect = None
    if not args.no_collect:
        collect = subprocess.Popen(
            [sys.executable, "-m", "pytest", "--collect-only", "-qq", "-p", "no:cacheprovider"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    dirs = package_dirs(PACKAGES) + [ROOT / name for name in SOURCES]
    files = python_files(dirs) + site_modules()
    failed = compile_files(files)
    errors = "" if collect is None else collect.communicate()[1]
    seconds = time.monotonic() - started
    what = f"{len(files):,} modules" + ("" if collect is None else " and the tests")
    print(f"warm_bytecode: {what} in {seconds:.1f} s", file=sys.stderr)
    # Neither is fatal: what was not written is compiled by whoever imports it, and a
    # test module that does not import is reported in full by the run that follows.
    if failed:
        print(
            f"warm_bytecode: {failed} modules did not compile (Python 2 or templates)",
            file=sys.stderr,
        )
    if collect is not None and collect.returncode != 0:
        print(f"warm_bytecode: the collection failed:\n{errors[-2000:]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
