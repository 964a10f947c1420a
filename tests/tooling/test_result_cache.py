"""tests/result_cache.py: what counts as an input, and when a pass is replayed."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from .. import result_cache


def _tree(root: Path) -> None:
    for path, text in {
        "modules/m/main.tf": 'resource "x" "y" {}',
        "modules/m/README.md": "# docs",
        "templates/m/def.json.j2": "{}",
        "lambda_src/p/handler.py": "x = 1",
        "tests/terraform/root_native/a.tftest.hcl": "run {}",
        "tests/semaphore/test_unrelated.py": "x = 1",
        ".venv/lib/site.py": "x = 1",
        "modules/m/.build/.fn.zip.json": "{}",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_inputs_are_the_code_not_the_docs_or_other_tests(tmp_path: Path) -> None:
    _tree(tmp_path)
    checks = result_cache.cached_check()
    files = checks.inputs(tmp_path, result_cache.SUFFIXES, result_cache.SKIPS)
    assert files == [
        "lambda_src/p/handler.py",
        "modules/m/main.tf",
        "templates/m/def.json.j2",
        "tests/terraform/root_native/a.tftest.hcl",
    ]


def test_an_edited_module_changes_the_key(tmp_path: Path) -> None:
    _tree(tmp_path)
    checks = result_cache.cached_check()

    def key() -> str:
        files = checks.inputs(tmp_path, result_cache.SUFFIXES, result_cache.SKIPS)
        return checks.key(tmp_path, files, ["terraform", "toolchain"], [])

    before = key()
    (tmp_path / "modules/m/README.md").write_text("# other docs")
    assert key() == before
    (tmp_path / "modules/m/main.tf").write_text('resource "x" "z" {}')
    assert key() != before


def test_a_recorded_pass_is_replayed_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SFN_PATTERNS_CACHE", str(tmp_path))
    monkeypatch.delenv(result_cache.NO_CACHE_ENV, raising=False)
    case = "terraform test modules/example tests (unit test of the cache)"
    assert not result_cache.passed_before(case)
    result_cache.record_pass(case, "3 passed, 0 failed")
    assert result_cache.passed_before(case)
    assert not result_cache.passed_before(case + " (another case)")
    monkeypatch.setenv(result_cache.NO_CACHE_ENV, "1")
    assert not result_cache.passed_before(case)


def test_a_kept_artifact_is_read_back_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SFN_PATTERNS_CACHE", str(tmp_path))
    monkeypatch.delenv(result_cache.NO_CACHE_ENV, raising=False)
    assert result_cache.built_before("a plan (unit test of the cache)") is None
    result_cache.keep_built("a plan (unit test of the cache)", '{"planned": true}')
    assert result_cache.built_before("a plan (unit test of the cache)") == '{"planned": true}'
    monkeypatch.setenv(result_cache.NO_CACHE_ENV, "1")
    assert result_cache.built_before("a plan (unit test of the cache)") is None


def test_a_build_is_kept_only_when_every_test_reading_it_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SFN_PATTERNS_CACHE", str(tmp_path))
    monkeypatch.delenv(result_cache.NO_CACHE_ENV, raising=False)
    session = SimpleNamespace(testsfailed=0)
    request = SimpleNamespace(session=session)
    builds: list[int] = []

    def build() -> dict[str, object]:
        builds.append(1)
        return {"plan": (1, "Error: x")}

    def use(fail: bool) -> object:
        fixture = result_cache.built_once(request, "a fixture (unit test of the cache)", build)
        value = next(fixture)
        session.testsfailed += fail  # a test reading it failed (or not)
        next(fixture, None)  # the fixture's teardown
        return value

    assert use(fail=True) == {"plan": [1, "Error: x"]}  # as JSON gives it back
    assert use(fail=False) == {"plan": [1, "Error: x"]}  # built again: the failure was not kept
    assert use(fail=False) == {"plan": [1, "Error: x"]}  # read back
    assert len(builds) == 2


def test_the_workers_use_the_key_the_controller_shared() -> None:
    before = os.environ.pop(result_cache.KEY_ENV, None)  # set when run under xdist
    result_cache._inputs_key.cache_clear()
    try:
        own = result_cache._inputs_key()
        result_cache._inputs_key.cache_clear()
        result_cache.share_key()
        assert os.environ[result_cache.KEY_ENV] == own
        # A worker (a new process: nothing cached) takes the shared key as it is.
        os.environ[result_cache.KEY_ENV] = "shared-by-the-controller"
        result_cache._inputs_key.cache_clear()
        assert result_cache._inputs_key() == "shared-by-the-controller"
    finally:
        os.environ.pop(result_cache.KEY_ENV, None)
        if before is not None:
            os.environ[result_cache.KEY_ENV] = before
        result_cache._inputs_key.cache_clear()
