"""sfn_patterns_localstack.bench: which LocalStack a benchmark uses, and when it destroys."""

from __future__ import annotations

import argparse
import os

import pytest

from sfn_patterns_localstack import bench, server


def test_a_given_localstack_is_used_and_destroyed_on_unless_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCALSTACK_ENDPOINT", "http://127.0.0.1:4566/")
    monkeypatch.setattr(server, "start", lambda: pytest.fail("started a LocalStack"))
    said: list[str] = []
    with bench.localstack(said.append, keep=False) as (endpoint, destroy):
        assert (endpoint, destroy) == ("http://127.0.0.1:4566", True)
    with bench.localstack(said.append, keep=True) as (_, destroy):
        assert destroy is False
    assert said == []


def test_a_localstack_started_here_is_never_destroyed_on_and_always_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOCALSTACK_ENDPOINT", raising=False)
    stopped: list[bool] = []
    environments: list[dict[str, str] | None] = []

    class Started:
        endpoint = "http://127.0.0.1:5000"

        def __init__(self, extra_env: dict[str, str] | None = None) -> None:
            environments.append(extra_env)

        def stop(self) -> None:
            stopped.append(True)

    monkeypatch.setattr(server, "start", Started)
    said: list[str] = []
    with pytest.raises(RuntimeError), bench.localstack(said.append, keep=False) as pair:
        assert pair == ("http://127.0.0.1:5000", False)
        raise RuntimeError("the benchmark failed")
    assert stopped == [True]
    assert said == ["starting LocalStack"]
    # A setting for the LocalStack started here goes to it, not into this process.
    setting = {"LAMBDA_LIMITS_CONCURRENT_EXECUTIONS": "2000"}
    with bench.localstack(said.append, False, setting):
        pass
    assert environments == [None, setting]
    assert "LAMBDA_LIMITS_CONCURRENT_EXECUTIONS" not in os.environ


def test_keep_is_one_option_with_one_help() -> None:
    parser = argparse.ArgumentParser()
    bench.add_keep_option(parser)
    assert parser.parse_args(["--keep"]).keep is True
    assert parser.parse_args([]).keep is False
    words = " ".join(parser.format_help().split())
    assert f"--keep {bench.KEEP_HELP}" in words
