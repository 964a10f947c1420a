"""modules/lambda-function/package.py: the zip's bytes depend only on the sources.

Two builds, two clones, any mtimes, modes or bytecode: the same bytes, so Terraform's
source_code_hash never churns. The packager runs on the plan-time python3 (3.9+).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGER = REPO_ROOT / "modules/lambda-function/package.py"
_spec = importlib.util.spec_from_file_location("lambda_package", PACKAGER)
package = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = package
_spec.loader.exec_module(package)

# What the pattern modules pack (modules/*/main.tf source_path), relative to lambda_src/.
MODULE_SOURCES = {
    "semaphore": [
        "sfn_patterns/__init__.py",
        "sfn_patterns/clients.py",
        "sfn_patterns/semaphore/**",
    ],
    "sqs-throttle": [
        "sfn_patterns/__init__.py",
        "sfn_patterns/clients.py",
        "sfn_patterns/sqs_throttle/**",
    ],
    "job-poller": [
        "sfn_patterns/__init__.py",
        "sfn_patterns/clients.py",
        "sfn_patterns/job_poller/**",
        "sfn_patterns/event_completion/**",
    ],
    "event-completion": [
        "sfn_patterns/__init__.py",
        "sfn_patterns/clients.py",
        "sfn_patterns/event_completion/**",
    ],
    "dag-aggregate": [
        "sfn_patterns/__init__.py",
        "sfn_patterns/clients.py",
        "sfn_patterns/dag_aggregate/__init__.py",
        "sfn_patterns/dag_aggregate/runtime/**",
    ],
    "smoke-sample": ["sfn_patterns_samples/__init__.py", "sfn_patterns_samples/smoke/**"],
}


def sources(lambda_src: Path, name: str) -> list:
    return [package.Source(lambda_src, tuple(MODULE_SOURCES[name]))]


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


@pytest.mark.parametrize("name", sorted(MODULE_SOURCES))
def test_two_builds_are_byte_identical(tmp_path: Path, name: str) -> None:
    first = package.build(sources(REPO_ROOT / "lambda_src", name), tmp_path / "a.zip")
    second = package.build(sources(REPO_ROOT / "lambda_src", name), tmp_path / "b.zip")
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
    for name in sorted(MODULE_SOURCES):
        a = package.build(sources(src_a, name), tmp_path / "out-a" / f"{name}.zip")
        b = package.build(sources(src_b, name), tmp_path / "out-b" / f"{name}.zip")
        assert a["sha256"] == b["sha256"], name


def test_zip_entries_are_normalized(tmp_path: Path) -> None:
    result = package.build(sources(REPO_ROOT / "lambda_src", "smoke-sample"), tmp_path / "s.zip")
    with zipfile.ZipFile(result["filename"]) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert "sfn_patterns_samples/smoke/handler.py" in names
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)
    for info in infos:
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert (info.external_attr >> 16) & 0o777 in (0o644, 0o755)


@pytest.mark.parametrize("name", ["semaphore", "sqs-throttle", "job-poller", "dag-aggregate"])
def test_runtime_zips_carry_no_sample_planner_or_demo_code(tmp_path: Path, name: str) -> None:
    built = package.build(sources(REPO_ROOT / "lambda_src", name), tmp_path / "r.zip")
    names = zipfile.ZipFile(built["filename"]).namelist()
    assert names and all(n.startswith("sfn_patterns/") for n in names), names
    assert not any("sample" in n or "demo" in n for n in names), names


def test_patterns_select_and_exclude_last_match_wins() -> None:
    patterns = ("**/*.py", "!tests/**", "tests/keep.py")
    assert package.selected("a.py", patterns)
    assert package.selected("pkg/sub/b.py", patterns)
    assert not package.selected("README.md", patterns)
    assert not package.selected("tests/test_x.py", patterns)
    assert package.selected("tests/keep.py", patterns)
    assert package.selected("x/y/z.txt", ("**",))
    assert not package.selected("pkg/a/b.py", ("pkg/*.py",))


def test_prefix_in_zip_and_a_single_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("x = 1\n")
    (tmp_path / "extra.txt").write_text("e\n")
    built = package.build(
        [package.Source(tmp_path / "src", ("**",), "lib"), package.Source(tmp_path / "extra.txt")],
        tmp_path / "out.zip",
    )
    assert zipfile.ZipFile(built["filename"]).namelist() == ["extra.txt", "lib/app.py"]


def test_unchanged_zip_is_not_rewritten(tmp_path: Path) -> None:
    first = package.build(sources(REPO_ROOT / "lambda_src", "smoke-sample"), tmp_path / "s.zip")
    before = os.stat(first["filename"]).st_mtime_ns
    package.build(sources(REPO_ROOT / "lambda_src", "smoke-sample"), tmp_path / "s.zip")
    assert os.stat(first["filename"]).st_mtime_ns == before


def test_a_zip_whose_files_did_not_change_is_described_without_a_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "src").mkdir()
    app = tmp_path / "src/app.py"
    app.write_text("x = 1\n")
    spec, out = [package.Source(tmp_path / "src")], tmp_path / "out.zip"
    first = package.build(spec, out)
    real_build_zip = package.build_zip
    built: list[int] = []

    def counting(files: list) -> bytes:
        built.append(len(files))
        return real_build_zip(files)

    monkeypatch.setattr(package, "build_zip", counting)
    assert package.build(spec, out) == first
    assert built == []
    # Same size, new content and mtime: rebuilt, and the description follows the bytes.
    app.write_text("x = 2\n")
    os.utime(app, ns=(app.stat().st_atime_ns, app.stat().st_mtime_ns + 1_000_000))
    second = package.build(spec, out)
    assert built == [1]
    assert second["sha256"] != first["sha256"]
    assert zipfile.ZipFile(out).read("app.py") == b"x = 2\n"
    # A zip changed behind the packager's back is rebuilt too.
    out.write_bytes(b"not a zip")
    assert package.build(spec, out) == second
    assert built == [1, 1]


def test_a_missing_or_empty_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(package.PackageError, match="does_not_exist does not exist"):
        package.package_files([package.Source(tmp_path / "does_not_exist")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(package.PackageError, match="selects no file"):
        package.package_files([package.Source(tmp_path / "empty", ("*.py",))])


def test_one_archive_name_from_two_files_is_refused(tmp_path: Path) -> None:
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "same.py").write_text(d)
    with pytest.raises(package.PackageError, match=r"same\.py is packed twice"):
        package.package_files([package.Source(tmp_path / "a"), package.Source(tmp_path / "b")])


def test_command_line_prints_json_for_terraform(tmp_path: Path) -> None:
    spec = [{"path": str(REPO_ROOT / "lambda_src"), "patterns": MODULE_SOURCES["semaphore"]}]
    proc = subprocess.run(
        ["python3", str(PACKAGER), "--out", str(tmp_path / "x.zip"), "--sources", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    described = json.loads(proc.stdout)
    assert set(described) >= {"filename", "base64sha256", "sha256", "size"}
    expected = package.build(sources(REPO_ROOT / "lambda_src", "semaphore"), tmp_path / "y.zip")
    assert described["sha256"] == expected["sha256"]


def test_command_line_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            "python3",
            str(PACKAGER),
            "--out",
            str(tmp_path / "x.zip"),
            "--sources",
            json.dumps([{"path": str(tmp_path / "nope")}]),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: source_path {tmp_path / 'nope'} does not exist"
    ]


def test_an_apply_time_rebuild_refuses_sources_that_no_longer_pack_the_planned_hash(
    tmp_path: Path,
) -> None:
    """lambda-function rebuilds a saved plan's zip at apply with --expect-base64sha256:
    the planned hash passes; sources edited since the plan fail, naming the zip and what
    to do, so the function never runs code the plan did not show."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "app.py").write_text("def handler(event, context):\n    return 1\n")
    out = tmp_path / "fn.zip"
    argv = ["--out", str(out), "--sources", json.dumps([{"path": str(source)}])]
    planned = package.build([package.Source(source)], tmp_path / "planned.zip")["base64sha256"]

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["python3", "-S", str(PACKAGER), *argv, *extra],
            capture_output=True,
            text=True,
            check=False,
        )

    assert run("--expect-base64sha256", planned).returncode == 0
    (source / "app.py").write_text("def handler(event, context):\n    return 2\n")
    proc = run("--expect-base64sha256", planned)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(
        f"error: {out}: the sources changed since the plan (the plan packed {planned}"
    )
    assert line.endswith("run terraform plan again")
