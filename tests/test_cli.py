"""The sfn-patterns command line: help that helps, and clear failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sfn_patterns.cli import main
from sfn_patterns_localstack.server import free_port


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("build-lambdas", "localstack", "demo", "dag", "status"):
        assert command in result.output


def test_build_lambdas_writes_zips_and_reports_hashes(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build-lambdas", "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    built = json.loads(result.stdout)
    assert {entry["bundle"] for entry in built} >= {"smoke"}
    for entry in built:
        assert Path(entry["filename"]).is_file()
        assert len(entry["sha256"]) == 64


def test_build_lambdas_rejects_unknown_bundle(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build-lambdas", "--out", str(tmp_path), "--bundle", "x"])
    assert result.exit_code == 2
    assert "Invalid value for '--bundle'" in result.output


def test_localstack_status_on_a_dead_endpoint_exits_1() -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(main, ["localstack", "status", "--endpoint", endpoint])
    assert result.exit_code == 1
    assert f"LocalStack is not reachable at {endpoint}" in result.output


def test_demo_help_documents_report_and_isolation_options() -> None:
    result = CliRunner().invoke(main, ["demo", "--help"])
    assert result.exit_code == 0
    for option in ("--endpoint", "--keep", "--report", "--name-prefix", "--work-dir"):
        assert option in result.output
    assert "build/demo-report/index.html" in result.output


def test_demo_exit_code_and_options_reach_the_runner(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from sfn_patterns import demo

    seen: dict[str, object] = {}

    def fake_run(**kwargs: object) -> int:
        seen.update(kwargs)
        return 1  # a pattern failed

    monkeypatch.setattr(demo, "run", fake_run)
    report = tmp_path / "r.html"
    result = CliRunner().invoke(
        main,
        ["demo", "--endpoint", "http://x:1", "--report", str(report), "--name-prefix", "p1"],
    )
    assert result.exit_code == 1
    assert seen == {
        "endpoint": "http://x:1",
        "keep": False,
        "report_path": report,
        "name_prefix": "p1",
        "work_dir": None,
    }
