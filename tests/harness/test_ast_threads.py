"""AST conversions from several threads at once succeed on the harness's Python (3.13).

CPython 3.11 kept the AST converters' recursion depth in one counter per interpreter:
a thread that lost the GIL in the middle of a conversion (a garbage collection runs
Python code there) and found another thread's conversion in progress failed with
"AST constructor recursion depth mismatch" (a LocalStack thread's ``lambda:invoke`` did,
on a loaded run). The harness serialised every AST conversion in LocalStack's process
while it ran on 3.11. CPython 3.13 keeps that depth per call (gh-106905), so the lock is
gone, and this test is the evidence: the same script fails on 3.11 and passes here.

The script makes the race certain rather than rare: a garbage-collection callback
sleeps, which hands the GIL to another converting thread mid-conversion.
"""

from __future__ import annotations

import subprocess
import sys

from tests.tooling.pythons import interpreter

SCRIPT = r"""
import ast, difflib, gc, threading, time
content = open(difflib.__file__).read()
errors = []
def handover(phase, info):
    if phase == "start":
        time.sleep(0.0005)  # another thread converts while this one is mid-conversion
gc.callbacks.append(handover)
gc.set_threshold(200)
def convert():
    for _ in range(5):
        try:
            ast.parse(content)
        except SystemError as error:
            errors.append(str(error))
threads = [threading.Thread(target=convert) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(errors), errors[:1])
"""


def _errors(python: str) -> str:
    done = subprocess.run(
        [python, "-I", "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def test_concurrent_ast_conversions_succeed_on_the_harness_python() -> None:
    assert sys.version_info[:2] == (3, 13)
    assert _errors(sys.executable) == "0 []"


def test_the_same_conversions_fail_on_python_3_11() -> None:
    """The check has teeth: on 3.11, the interpreter the lock was for, it finds the race."""
    found = _errors(str(interpreter("3.11")))
    assert not found.startswith("0 "), found
    assert "AST constructor recursion depth mismatch" in found
