"""The Lambda zips' bytes depend only on the sources: two builds, two clones, same bytes."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from sfn_patterns import packaging

REPO_ROOT = Path(__file__).resolve().parents[2]


def _clone(target: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(target)], check=True)
    # Uncommitted work is part of what is under test: overlay it on the clone.
    shutil.rmtree(target / "lambda_src", ignore_errors=True)
    shutil.copytree(
        REPO_ROOT / "lambda_src",
        target / "lambda_src",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return target / "lambda_src"


@pytest.mark.parametrize("bundle", sorted(packaging.BUNDLES))
def test_two_builds_are_byte_identical(tmp_path: Path, bundle: str) -> None:
    first = packaging.build(bundle, tmp_path / "a")
    second = packaging.build(bundle, tmp_path / "b")
    assert Path(first["filename"]).read_bytes() == Path(second["filename"]).read_bytes()
    assert first["sha256"] == second["sha256"]


def test_fresh_clones_build_identical_zips(tmp_path: Path) -> None:
    src_a = _clone(tmp_path / "clone-a")
    src_b = _clone(tmp_path / "clone-b")
    # Make the clones differ in everything but content: mtimes, modes, bytecode.
    for path in src_b.rglob("*.py"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
        path.chmod(0o600)
    for pkg in src_b.rglob("__init__.py"):
        cache = pkg.parent / "__pycache__"
        cache.mkdir(exist_ok=True)
        (cache / "stale.cpython-311.pyc").write_bytes(b"not source")
    for bundle in sorted(packaging.BUNDLES):
        a = packaging.build(bundle, tmp_path / "out-a", lambda_src=src_a)
        b = packaging.build(bundle, tmp_path / "out-b", lambda_src=src_b)
        assert a["sha256"] == b["sha256"], bundle


def test_zip_entries_are_normalized(tmp_path: Path) -> None:
    result = packaging.build("smoke", tmp_path)
    with zipfile.ZipFile(result["filename"]) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert "sfn_patterns/smoke/handler.py" in names
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert (info.external_attr >> 16) & 0o777 in (0o644, 0o755)


def test_unchanged_zip_is_not_rewritten(tmp_path: Path) -> None:
    first = packaging.build("smoke", tmp_path)
    before = os.stat(first["filename"]).st_mtime_ns
    packaging.build("smoke", tmp_path)
    assert os.stat(first["filename"]).st_mtime_ns == before


def test_unknown_bundle_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="unknown bundle 'nope'; known: "):
        packaging.build("nope", tmp_path)


def test_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    bundle = packaging.Bundle(sources=("sfn_patterns/does_not_exist",))
    with pytest.raises(FileNotFoundError, match="does_not_exist"):
        packaging.bundle_files(bundle)


def test_command_line_prints_json_for_terraform(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            "python3",
            str(REPO_ROOT / "lambda_src/sfn_patterns/packaging.py"),
            "--bundle",
            "smoke",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    described = json.loads(proc.stdout)
    assert set(described) >= {"filename", "base64sha256", "sha256", "size"}
    assert described["sha256"] == packaging.build("smoke", tmp_path)["sha256"]
