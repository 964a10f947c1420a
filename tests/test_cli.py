"""The sfn-patterns command line: help that helps, and clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sfn_patterns_cli.cli import main
from sfn_patterns_localstack.server import free_port


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("localstack", "demo", "dag", "status"):
        assert command in result.output


def test_harness_commands_name_the_install_command_when_the_harness_is_missing() -> None:
    from sfn_patterns_cli import cli

    # What `sfn-patterns` attaches for `localstack` and `demo` when no installed
    # distribution registers them (the harness is not installed).
    for name, help_text in cli.HARNESS_COMMANDS.items():
        command = cli.missing_harness_command(name, help_text)
        result = CliRunner().invoke(command, ["status", "--endpoint", "http://x:1"])
        assert result.exit_code == 2
        assert "needs the harness distribution" in result.output
        assert "#subdirectory=harness" in result.output
        assert "Traceback" not in result.output


def test_the_harness_registers_its_commands_throughplugin_entry_points() -> None:
    from sfn_patterns_cli import cli

    names = {ep.name for ep in cli.plugin_entry_points(cli.COMMANDS_ENTRY_POINT_GROUP)}
    assert names == set(cli.HARNESS_COMMANDS)
    # The real group, not the stand-in: it has subcommands.
    result = CliRunner().invoke(main, ["localstack", "--help"])
    assert result.exit_code == 0
    for sub in ("start", "stop", "status"):
        assert sub in result.output


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
    from sfn_patterns_localstack.demo import run as demo

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
        "customer_key": True,  # the demo's default: a customer managed key
    }


def test_demo_aws_owned_keys_turns_the_customer_key_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from sfn_patterns_localstack.demo import run as demo

    seen: dict[str, object] = {}
    monkeypatch.setattr(demo, "run", lambda **kwargs: seen.update(kwargs) or 0)
    result = CliRunner().invoke(main, ["demo", "--endpoint", "http://x:1", "--aws-owned-keys"])
    assert result.exit_code == 0, result.output
    assert seen["customer_key"] is False
    assert demo.variables("p1", customer_key=False)["create_kms_key"] is False
    assert demo.variables("p1")["create_kms_key"] is True
