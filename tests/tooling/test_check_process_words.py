"""scripts/check_process_words.py fails on words of the process and passes the product's.

The checker runs in ``make fast-checks`` over every tracked file; these tests plant the
phrases it exists to catch (and the real uses of "session" and "stop" it must let
through) in files of their own and run its ``main`` on them in this process; the
repository's own check runs it as make does, as a script.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_process_words.py"


def checker() -> ModuleType:
    """scripts/check_process_words.py as a module (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("check_process_words", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKER = checker()


# The phrases below are written with a "·" inside one word and joined only when a test
# writes them out, so this file, which the checker reads like any other, holds none.
def planted(text: str) -> str:
    """``text`` as the checker will see it (the "·" taken out)."""
    return text.replace("·", "")


def run(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The checker's exit code, stdout and stderr for one file."""
    code = CHECKER.main([str(path)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "phrase",
    [
        "The warm run took 7 min 59 s (veri·fy69 on 2665a59).",
        "Measured in st·op 49, before the futex hash.",
        "CI of st·op 38 failed on a two-pollers case.",
        "Under the target in st·ops 43 and 44.",
        "Th·is stop's tests add about 3 s.",
        "16 min 30 s (ff554c5, th·is session's first run on a new machine)",
        "Fixed in th·is session.",
        "The lease is renewed before it runs out (fixed in iss·ue 28).",
        "Iss·ue 28 item 6: two holders stopped within a second.",
        "What the suite ran before iss·ues 27-30.",
        "The semaphore's invariants (iss·ue #53).",
    ],
)
def test_a_planted_process_phrase_fails_naming_file_and_line(
    tmp_path: Path, phrase: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text(f"# Notes\n\nThe pattern admits in arrival order.\n{planted(phrase)}\n")
    code, out, err = run(doc, capsys)
    assert code == 1, out + err
    assert "notes.md:4: " in out, out
    assert "process phrase" in err


@pytest.mark.parametrize(
    "line",
    [
        "IAM decides every call a role session makes.",
        "Every test session checks every definition; the session's LocalStack is thrown away.",
        "StopExecution ends it at once; a stop 5 s later finds it ABORTED.",
        "Started and not yet through at the stop: parked.",
        "Deliveries of each stop's event to the cleanup; the stop's event is lost.",
        "``--stop 0,1``: the executions the stopper stops.",
        "sessions no longer running go; botocore session",
        "A label such as veri·fy69 stays here for a reason. (process-words: allow)",
        "Worked around: https://github.com/localstack/localstack/issues/12345 (LocalStack's).",
        "Open issues of another project are linked, not numbered; the issue tracker is theirs.",
    ],
)
def test_the_products_own_words_pass(
    tmp_path: Path, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text(f"# Guide\n\n{planted(line)}\n")
    code, out, err = run(doc, capsys)
    assert code == 0, out + err


def test_the_repository_speaks_of_the_product_only() -> None:
    """What make fast-checks runs: every tracked file, the checker's own two left out."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "no process phrases in" in result.stdout
