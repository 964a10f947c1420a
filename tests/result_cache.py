"""Replay a deterministic test's pass while nothing it reads has changed.

Why: `terraform test` over every module (tests/terraform/test_native.py) plans 183
run blocks with mock providers: 140 to 200 CPU-seconds of a 2-core machine per
`make test` (tests/cpu_account.py measured it), most of it Terraform evaluating the
same unchanged HCL again. Its outcome depends only on the files it reads, the
Terraform and provider builds and the Python that renders at plan time: no clock, no
network, no LocalStack. The same holds for `terraform validate` of every
configuration (tests/terraform/test_validate.py, about 30 CPU-seconds). So, as for
checkov (scripts/cached_check.py, whose input walk and key this reuses) and as Bazel
or Nx do for tests, a passing result is kept
under a key made of exactly those inputs and replayed while they are unchanged. A
failure is never kept. ``SFN_PATTERNS_NO_CHECK_CACHE=1`` runs everything again, and
the session's summary lists what it replayed.

Inputs are taken broadly, not guessed narrowly: every file of the repository except
documentation, the Python test tree outside ``tests/terraform/`` and build output, so
an edit to any module, template, runtime or planner file runs every case again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sfn_patterns_localstack.server import cache_dir
from sfn_patterns_localstack.terraform.workspace import REPO_ROOT, terraform_binary

NO_CACHE_ENV = "SFN_PATTERNS_NO_CHECK_CACHE"
SKIPS = [
    re.compile(p)
    for p in (
        r"(^|/)\.venv/",
        r"(^|/)\.terraform/",
        r"(^|/)build/",
        # Built Lambda zips and the packager's records of them (.<zip>.json): outputs
        # of a run, which a key read after them would count as inputs.
        r"(^|/)\.build/",
        r"(^|/)node_modules/",
        r"(^|/)__pycache__/",
        r"(^|/)\.\w+_cache/",
        r"\.md$",
        r"\.lock\.hcl$",
        r"\.tfstate",
        r"^tests/(?!terraform/|$)",
        r"^scripts/",
    )
]
SUFFIXES = (".tf", ".hcl", ".py", ".json", ".j2", ".tftpl", ".sql", ".toml", ".lock", ".txt")


def cached_check() -> ModuleType:
    """scripts/cached_check.py, whose input walk and key this reuses."""
    spec = importlib.util.spec_from_file_location(
        "cached_check", REPO_ROOT / "scripts" / "cached_check.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.lru_cache(maxsize=1)
def _toolchain() -> str:
    """Terraform's version and the providers' bytes: a rebuild changes the key."""
    version = subprocess.run(
        [terraform_binary(), "version", "-json"], capture_output=True, text=True, check=True
    ).stdout
    digest = hashlib.sha256(json.dumps(json.loads(version)["terraform_version"]).encode())
    for binary in sorted((cache_dir() / "tf-mirror").rglob("terraform-provider-*")):
        with binary.open("rb") as stream:
            digest.update(hashlib.file_digest(stream, "sha256").digest())
    digest.update(sys.version.encode())
    return digest.hexdigest()


KEY_ENV = "SFNP_RESULT_CACHE_KEY"


def share_key() -> None:
    """Compute the key once, before the workers start, and hand it to each of them.

    Why: each xdist worker used to compute it at its first replayable case, at a
    different moment and in a process a run's earlier tests had been through, and
    two workers of one run could disagree: one run replayed `terraform validate`
    (the key the run before had recorded) but ran every `terraform test` again, on a
    key of its own that no later clone would match (131 CPU-seconds). Called by the
    xdist controller (conftest), whose environment the workers inherit.
    """
    os.environ.setdefault(KEY_ENV, _inputs_key())


@functools.lru_cache(maxsize=1)
def _inputs_key() -> str:
    shared = os.environ.get(KEY_ENV)
    if shared:
        return shared
    checks = cached_check()
    files = checks.inputs(REPO_ROOT, SUFFIXES, SKIPS)
    return checks.key(REPO_ROOT, files, ["terraform", _toolchain()], [])


def _marker(case: str, suffix: str = ".pass") -> Path:
    digest = hashlib.sha256(f"{_inputs_key()}\0{case}".encode()).hexdigest()
    return cache_dir() / "check-results" / "pytest" / f"{digest}{suffix}"


def built_before(name: str) -> str | None:
    """An artifact (a plan's JSON) built from exactly these inputs, if one was kept.

    Unlike a replayed pass, the checks still run: only the build they read is reused,
    as a compiler cache reuses an object file.
    """
    if os.environ.get(NO_CACHE_ENV) == "1":
        return None
    path = _marker(name, ".artifact")
    return path.read_text() if path.is_file() else None


def keep_built(name: str, text: str) -> None:
    """Keep an artifact built from these inputs for the next run."""
    path = _marker(name, ".artifact")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(text)
    partial.replace(path)


def files_digest(*paths: Path) -> str:
    """A digest of these files' bytes, for the name of a build whose inputs include them.

    Why: the key covers the repository but not the Python test tree outside
    ``tests/terraform/``; a test there that builds from its own text (a generated
    configuration, its SQL) names its build with this digest of its own files.
    """
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def built_once(
    request: pytest.FixtureRequest, name: str, build: Callable[[], Any]
) -> Iterator[Any]:
    """A module-scoped fixture's body: yield ``build()``'s JSON value, or the one kept.

    Use as ``yield from built_once(request, name, build)``. The checks that read it
    run either way. A build is kept only when every test that ran while the fixture
    was up passed, so a build that went wrong (a LocalStack hiccup, an unexpected message)
    is never replayed.
    """
    kept = built_before(name)
    if kept is not None:
        yield json.loads(kept)
        return
    failed = request.session.testsfailed
    value = json.loads(json.dumps(build()))  # as a replay would give it (lists, not tuples)
    yield value
    if request.session.testsfailed == failed:
        keep_built(name, json.dumps(value))


def passed_before(case: str) -> bool:
    """True when ``case`` passed on exactly these inputs (and replay is allowed)."""
    if os.environ.get(NO_CACHE_ENV) == "1":
        return False
    return _marker(case).is_file()


def record_pass(case: str, summary: str) -> None:
    """Keep ``case``'s pass (its output's summary line) for the next run."""
    marker = _marker(case)
    marker.parent.mkdir(parents=True, exist_ok=True)
    partial = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
    partial.write_text(summary + "\n")
    partial.replace(marker)
