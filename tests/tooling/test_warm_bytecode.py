"""scripts/warm_bytecode.py finds packages without importing them and writes their bytecode."""

from __future__ import annotations

import importlib.util
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
