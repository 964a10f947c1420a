"""Collection thresholds of the run's long-lived processes (sfn_patterns_localstack.gc_tuning).

Each case runs in a fresh interpreter: thresholds are process state, and this test
process tuned its own at conftest import.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CPYTHON_DEFAULT = "(2000, 10, 10)"  # CPython 3.13's, the harness's Python


def _run(code: str, **env: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_tune_raises_the_young_threshold_and_default_leaves_cpythons() -> None:
    code = """
        import gc
        from sfn_patterns_localstack import gc_tuning
        print(gc.get_threshold(), gc_tuning.tune(), gc.get_threshold())
    """
    assert _run(code, SFNP_GC="") == f"{CPYTHON_DEFAULT} True (50000, 10, 10)"
    assert _run(code, SFNP_GC="default") == f"{CPYTHON_DEFAULT} False {CPYTHON_DEFAULT}"


def test_localstacks_entry_point_tunes_before_localstack_runs() -> None:
    """startup.main() tunes first; LocalStack's own main (stubbed here) sees the thresholds."""
    code = """
        import gc, runpy
        from sfn_patterns_localstack.emulation import startup
        runpy.run_module = lambda *args, **kwargs: print(gc.get_threshold())
        startup.main()
    """
    assert _run(code) == "(50000, 10, 10)"
