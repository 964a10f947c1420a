"""scripts/warm_bytecode.py finds packages without importing them and writes their bytecode."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("warm_bytecode", REPO / "scripts/warm_bytecode.py")
warm = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = warm
spec.loader.exec_module(warm)


def test_packages_are_found_not_imported_and_missing_ones_skipped() -> None:
    dirs = warm.package_dirs(["json", "sfnp_no_such_package"])
    assert dirs == [Path(importlib.util.find_spec("json").submodule_search_locations[0])]


def test_bytecode_is_written_once_and_a_broken_module_is_counted(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("Y = 2\n")
    (tmp_path / "pkg" / "broken.py").write_text("print 'python 2'\n")
    files = warm.python_files([tmp_path / "pkg"])
    assert sorted(Path(f).name for f in files) == ["a.py", "b.py", "broken.py"]
    assert warm.compile_files(files) == 1
    tag = sys.implementation.cache_tag
    written = tmp_path / "pkg" / "sub" / "__pycache__" / f"b.{tag}.pyc"
    assert written.is_file()
    assert (tmp_path / "pkg" / "__pycache__" / f"a.{tag}.pyc").is_file()
    assert not (tmp_path / "pkg" / "__pycache__" / f"broken.{tag}.pyc").exists()
    # Current bytecode is left alone (the second run of a warm checkout costs little).
    before = written.stat().st_mtime_ns
    assert warm.compile_files(files) == 1
    assert written.stat().st_mtime_ns == before


def test_the_single_file_modules_are_those_beside_the_packages() -> None:
    site = Path(importlib.util.find_spec("boto3").submodule_search_locations[0]).parent
    modules = [Path(m) for m in warm.site_modules()]
    assert modules and all(m.parent == site and m.suffix == ".py" for m in modules)


def test_uv_cache_bytecode_is_written_once_and_current_where_uv_links_it(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "uv-cache"
    wheel = cache / "archive-v0" / "AbC123"
    (wheel / "pkg").mkdir(parents=True)
    (wheel / "pkg" / "__init__.py").write_text("X = 1\n")
    (wheel / "single.py").write_text("Y = 2\n")
    # A wheel's scripts: uv refuses a directory there, so no __pycache__ may appear.
    scripts = wheel / "pkg-1.0.data" / "scripts"
    scripts.mkdir(parents=True)
    (scripts / "tool.py").write_text("Z = 3\n")
    assert [d for d, _ in warm.uv_archives(cache)] == [wheel]
    assert warm.compile_uv_cache(cache) == 1
    tag = sys.implementation.cache_tag
    pyc = wheel / "pkg" / "__pycache__" / f"__init__.{tag}.pyc"
    assert pyc.is_file()
    assert (wheel / "__pycache__" / f"single.{tag}.pyc").is_file()
    assert sorted(p.name for p in scripts.iterdir()) == ["tool.py"]
    # The marker lives beside the cache: nothing new inside the unpacked wheel but
    # bytecode (uv links every file it finds there into each venv).
    assert sorted(p.name for p in wheel.iterdir()) == [
        "__pycache__",
        "pkg",
        "pkg-1.0.data",
        "single.py",
    ]
    assert warm.uv_archives(cache) == [] and warm.compile_uv_cache(cache) == 0
    # What uv does on one filesystem: hardlink each file, __pycache__ included. Python
    # takes the linked bytecode as current (it would otherwise say it is stale, or
    # compile again; with PYTHONDONTWRITEBYTECODE it could not write any).
    site = tmp_path / "venv-site"
    (site / "pkg" / "__pycache__").mkdir(parents=True)
    os.link(wheel / "pkg" / "__init__.py", site / "pkg" / "__init__.py")
    os.link(pyc, site / "pkg" / "__pycache__" / pyc.name)
    proc = subprocess.run(
        [sys.executable, "-v", "-c", "import pkg"],
        cwd=site,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"{site / 'pkg' / '__pycache__' / pyc.name} matches" in proc.stderr
