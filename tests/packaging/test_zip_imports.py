"""Every Lambda zip a module packs holds every runtime module its code imports.

The modules pack ``lambda_src`` by glob patterns (``source_path``); a runtime module
that a pattern starts to import (``sfn_patterns.clients``, shared by all of them) but
no pattern names would be missing from the zip, and the handler would fail at import
with ``Runtime.ImportModuleError`` only once deployed. This reads each ``patterns``
list of ``modules/*/*.tf`` and follows the ``sfn_patterns`` imports of the files it
selects.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
LAMBDA_SRC = REPO_ROOT / "lambda_src"
PATTERNS = re.compile(r"patterns\s*=\s*\[([^\]]*\"sfn_patterns/__init__\.py\"[^\]]*)\]")


def _pattern_lists() -> list[tuple[str, tuple[str, ...]]]:
    found = []
    for tf in sorted((REPO_ROOT / "modules").glob("*/*.tf")):
        for match in PATTERNS.finditer(tf.read_text()):
            globs = tuple(re.findall(r"\"([^\"]+)\"", match.group(1)))
            found.append((f"{tf.relative_to(REPO_ROOT)}:{globs[1:3]}", globs))
    return found


def _selected(globs: tuple[str, ...]) -> set[str]:
    files = {str(p.relative_to(LAMBDA_SRC)) for p in LAMBDA_SRC.rglob("*.py")}
    # package.py's globs: ** spans directories, as fnmatch's * does.
    return {f for f in files if any(fnmatch.fnmatch(f, g) for g in globs)}


def _imported_modules(path: Path) -> set[str]:
    """Dotted names of the sfn_patterns modules a file imports when it is imported.

    Module-level imports only (absolute or relative): a function's own import runs
    when that function is called, and a zip may carry modules whose functions it
    never calls (the sample job's zip holds job_poller's get_job_status).
    """
    package = ".".join(path.relative_to(LAMBDA_SRC).with_suffix("").parts[:-1])
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return {n for n in names if n.split(".")[0] == "sfn_patterns"}


def _module_file(name: str) -> str | None:
    path = Path(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if (LAMBDA_SRC / candidate).is_file():
            return str(candidate)
    return None  # an attribute imported from a module (from x import name)


CASES = _pattern_lists()


def test_the_modules_pack_runtime_code() -> None:
    assert len(CASES) >= 8, CASES  # job-poller (2), sqs-throttle, event-completion, ...


@pytest.mark.parametrize(("where", "globs"), CASES, ids=[c[0] for c in CASES])
def test_each_zip_holds_what_its_code_imports(where: str, globs: tuple[str, ...]) -> None:
    selected = _selected(globs)
    missing = {
        (file, module_file)
        for file in selected
        for name in _imported_modules(LAMBDA_SRC / file)
        if (module_file := _module_file(name)) and module_file not in selected
    }
    assert not missing, f"{where}: imported but not packed: {sorted(missing)}"


def test_the_check_sees_a_missing_module() -> None:
    # Without clients.py in its patterns, the semaphore's zip misses what it imports.
    globs = ("sfn_patterns/__init__.py", "sfn_patterns/semaphore/**")
    selected = _selected(globs)
    imported = {
        _module_file(name) for file in selected for name in _imported_modules(LAMBDA_SRC / file)
    }
    assert "sfn_patterns/clients.py" in imported - selected
