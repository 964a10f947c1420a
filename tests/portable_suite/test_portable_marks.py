"""tests/portable.py: what a portable run skips, and the reasons it gives."""

from __future__ import annotations

import pytest

from tests import portable

pytest_plugins = ["pytester"]

MARKED = """
import pytest
from tests import portable

@pytest.mark.needs("fix:sfn_stop")
def test_needs_a_fix():
    pass

@pytest.mark.iam_denial
def test_provokes_a_denial():
    pass

def test_calls_the_alarm_proof():
    portable.require("metrics")

def test_plain():
    pass
"""


def test_a_fix_reason_quotes_what_aws_does() -> None:
    text = portable.reason("fix:sfn_stop")
    assert text.startswith("needs fix:sfn_stop: StopExecution ends an execution at once")
    assert "emulation/fixes/sfn_stop.py" in text


def test_an_unknown_need_fails_on_every_run() -> None:
    with pytest.raises(ValueError, match="there is no harness fix"):
        portable.reason("fix:no_such_fix")
    with pytest.raises(ValueError, match="unknown need 'iam-ish'"):
        portable.require("iam-ish")


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, enabled: bool):
    monkeypatch.setenv(portable.ENV, "1" if enabled else "0")
    pytester.makeconftest(
        "import pytest\nfrom tests import portable\n"
        "def pytest_configure(config):\n"
        "    config.addinivalue_line('markers', 'needs(*what): x')\n"
        "    config.addinivalue_line('markers', 'iam_denial: x')\n"
        "def pytest_collection_modifyitems(items):\n"
        "    portable.skip_marked(items)\n"
    )
    pytester.makepyfile(test_marked=MARKED)
    monkeypatch.syspath_prepend(str(portable.REPO_ROOT))
    return pytester.runpytest_inprocess("-rs", "-p", "no:cacheprovider")


def test_a_portable_run_skips_what_needs_the_harness_and_says_why(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, enabled=True)
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(
        [
            "*needs fix:sfn_stop: StopExecution ends an execution at once*",
            "*needs iam: IAM decides every call*",
            "*needs metrics: CloudWatch publishes*",
        ]
    )


def test_on_the_harness_nothing_is_skipped(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(pytester, monkeypatch, enabled=False).assert_outcomes(passed=4)


def test_a_portable_run_applies_configurations_with_tags_untagged(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stock LocalStack 4.14.0 cannot describe a tagged alarm to Terraform (portable.py)."""
    from sfn_patterns_localstack.terraform import workspace

    calls: list[tuple[str, ...]] = []
    monkeypatch.setattr(
        workspace.Workspace, "run", lambda self, *args, check=True: calls.append(args)
    )
    portable.untagged_applies()
    tagged, untagged = tmp_path / "tagged", tmp_path / "untagged"
    for config, text in ((tagged, 'variable "tags" {}\n'), (untagged, 'variable "x" {}\n')):
        config.mkdir()
        (config / "variables.tf").write_text(text)

    class Fake:
        def __init__(self, config_dir):
            self.config_dir = config_dir

    workspace.Workspace.run(Fake(tagged), "apply", "-auto-approve")
    workspace.Workspace.run(Fake(tagged), "plan", '-var=tags={"a":"b"}')
    workspace.Workspace.run(Fake(tagged), "output", "-json")
    workspace.Workspace.run(Fake(untagged), "destroy")
    assert calls == [
        ("apply", "-auto-approve", "-var=tags={}"),
        ("plan", '-var=tags={"a":"b"}'),
        ("output", "-json"),
        ("destroy",),
    ]
