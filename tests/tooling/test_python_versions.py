"""The runtime library and the planner on the oldest and newest Python they support.

The harness is pinned to Python 3.13 (LocalStack 4.14.0), but what users install is not:
the runtime library (``lambda_src``) runs in Lambda (python3.10-3.13) and in callers'
code, and the planner runs at ``terraform plan`` time on a CI image's ``python3``. For
Python 3.9 and 3.13 (pyenv interpreters where they are installed) this test:

* builds a wheel of ``lambda_src`` and installs it with pip into a fresh venv, then
  runs the runtime unit tests (``-m "runtime and not integration"``, moto) there;
* installs the planner's dependencies at what pip resolves for that Python (on 3.9:
  the oldest releases the planner supports) and runs ``modules/dag-aggregate/planner.py``
  on the example SQL, as Terraform does.

The venvs are cached under ``$SFN_PATTERNS_CACHE/pyvenv/`` keyed by the inputs' hash.
The runtime tests' pass on each version is replayed while nothing they read changed
(tests/result_cache.py: the repository's files, and these test files by digest): on
both interpreters they were about 45 CPU-seconds of a warm run, and they read no clock,
network or LocalStack (moto only). ``SFN_PATTERNS_NO_CHECK_CACHE=1`` runs them.

Every process of the matrix (per version: the import check, the runtime tests, the
planner) starts at once, from a module-scoped fixture, and each test reads its own
process's result: the two interpreters' test runs, most of this file's time, overlap
instead of following one another. Nothing is run on behalf of another check: each
check still has its own process, and a failing one fails only its own test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from .. import result_cache
from .pythons import PLANNER_REQUIREMENTS, REPO, interpreter, run, venv_for

# The files holding runtime-library tests (pytestmark = pytest.mark.runtime); they import
# nothing but the runtime, boto3, pynamodb, moto and pytest.
RUNTIME_TEST_FILES = [
    "tests/status_table/test_tracker.py",
    "tests/status_table/test_bulk_and_queries.py",
    "tests/sqs_throttle/test_naming_producer.py",
    "tests/sqs_throttle/test_ledger.py",
    "tests/sqs_throttle/test_starter_lease.py",
]


# What the runtime tests read besides the repository's key (tests/ is outside it).
TEST_INPUTS = [
    *RUNTIME_TEST_FILES,
    "tests/status_table/conftest.py",
    "tests/tooling/pythons.py",
    "tests/tooling/test_python_versions.py",
]


def runtime_tests_case(version: str) -> str:
    """The result cache's name for the runtime tests' pass on ``version``."""
    digest = result_cache.files_digest(*(REPO / path for path in TEST_INPUTS))
    return f"runtime tests on python{version} {digest}"


VERSIONS = ["3.9", "3.13"]
STEPS = ("where", "tests", "plan")  # the import check, the runtime tests, the planner


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Future]]]:
    """Per version, per step, the future of that step's finished process (see the docstring).

    A step's future raises what ``run`` raises: an AssertionError naming the command and
    its output when the process fails, which the step's own test then reports.
    """
    dirs = {
        v: (tmp_path_factory.mktemp(f"py{v}"), tmp_path_factory.mktemp(f"out{v}")) for v in VERSIONS
    }
    # One thread per venv and per step: a step's thread waits for its venv's future.
    with ThreadPoolExecutor(max_workers=len(VERSIONS) * (1 + len(STEPS))) as pool:
        venvs = {v: pool.submit(venv_for, v, dirs[v][0]) for v in VERSIONS}

        def step(version: str, *args: object, cwd: Path = REPO) -> subprocess.CompletedProcess:
            # The pytest's 900 s: both interpreters' runs share the machine at once.
            return run(venvs[version].result(), *args, cwd=cwd, timeout=900)

        runs: dict[str, dict[str, Future]] = {}
        for version in VERSIONS:
            outside = dirs[version][1]  # a directory outside the checkout
            runs[version] = {
                "where": pool.submit(
                    step,
                    version,
                    "-c",
                    "import sfn_patterns.status_table as m; print(m.__file__)",
                    cwd=outside,
                ),
                "tests": None
                if result_cache.passed_before(runtime_tests_case(version))
                else pool.submit(
                    step,
                    version,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    # The installed wheel, not lambda_src/ (pyproject's pythonpath), is
                    # what the tests import; and tests/conftest.py stays out: the two
                    # runs at once must not write the session's build/test-*.json.
                    "-o",
                    "pythonpath=",
                    "--confcutdir",
                    "tests/status_table",
                    "-m",
                    "runtime and not integration",
                    *RUNTIME_TEST_FILES,
                ),
                "plan": pool.submit(
                    step,
                    version,
                    REPO / "modules/dag-aggregate/planner.py",
                    "plan",
                    "--json",
                    "--sql-dir",
                    REPO / "examples/dag-aggregate/sql",
                    cwd=outside,
                ),
            }
        yield runs


@pytest.mark.parametrize("version", VERSIONS)
def test_runtime_library_installs_and_its_tests_pass(
    version: str, matrix: dict[str, dict[str, Future | None]], request: pytest.FixtureRequest
) -> None:
    # Installed from the wheel: importable from outside the checkout.
    where = matrix[version]["where"].result()
    assert "site-packages" in where.stdout
    if matrix[version]["tests"] is None:
        # Passed on exactly these inputs before; the session's summary lists it.
        request.node.user_properties.append(("replayed", runtime_tests_case(version)))
        return
    proc = matrix[version]["tests"].result()
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
    result_cache.record_pass(runtime_tests_case(version), summary)


@pytest.mark.parametrize("version", VERSIONS)
def test_planner_runs_at_plan_time_on_this_python(
    version: str, matrix: dict[str, dict[str, Future]]
) -> None:
    proc = matrix[version]["plan"].result()
    plan = json.loads(proc.stdout)
    expected = sorted(p.stem for p in (REPO / "examples/dag-aggregate/sql").glob("*.sql"))
    assert sorted(plan["tasks"]) == expected


def test_planner_without_its_dependencies_fails_with_one_line_and_the_fix(
    tmp_path: Path,
) -> None:
    bare = tmp_path / "bare"
    run(interpreter("3.9"), "-m", "venv", "--without-pip", bare)
    proc = subprocess.run(
        [
            str(bare / "bin/python"),
            str(REPO / "modules/dag-aggregate/planner.py"),
            "plan",
            "--sql-dir",
            str(REPO / "examples/dag-aggregate/sql"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert "networkx (not installed; needs >= 3.2)" in line
    assert f"Fix: {bare / 'bin/python'} -m pip install 'networkx>=3.2'" in line
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_every_runtime_marked_test_file_is_in_the_matrix() -> None:
    marked = {
        str(path.relative_to(REPO))
        for path in (REPO / "tests").rglob("test_*.py")
        if re.search(r"^pytestmark = .*pytest\.mark\.runtime", path.read_text(), re.MULTILINE)
    }
    assert marked == set(RUNTIME_TEST_FILES)


def test_planner_bounds_match_the_cli_distribution() -> None:
    """planner.py checks the same minimum versions cli/pyproject.toml declares."""
    import importlib.util
    import tomllib

    spec = importlib.util.spec_from_file_location(
        "planner", REPO / "modules/dag-aggregate/planner.py"
    )
    planner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(planner)
    declared = tomllib.loads((REPO / "cli/pyproject.toml").read_text())["project"]["dependencies"]
    checked = {f"{name}>={minimum}" for name, (_, minimum) in planner.REQUIREMENTS.items()}
    assert checked == {d for d in declared if not d.startswith("sfn-patterns")}
    assert checked == set(PLANNER_REQUIREMENTS)
    assert sys.version_info >= (3, 11)  # tomllib: this check runs on the harness's Python
