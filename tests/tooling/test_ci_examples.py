"""The sample pipelines in examples/ci parse and call only what this repository has.

A team copies them into its CI, so a pipeline that names a make target, script or
LocalStack image this repository does not have fails there, far from here. Checked: each
file parses as YAML; every ``make TARGET`` it runs is a target of the Makefile; every
``scripts/...`` path it runs exists; the LocalStack image it starts is the release the
harness is pinned to; the portable job passes an ``ENDPOINT``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

REPO = Path(__file__).resolve().parents[2]
CI_DIR = REPO / "examples" / "ci"
PIPELINES = sorted(CI_DIR.glob("*.yml"))


def make_targets(makefile: Path = REPO / "Makefile") -> set[str]:
    """The targets the Makefile defines (``name: ...`` at the start of a line)."""
    return set(re.findall(r"^([a-z][a-z0-9-]*):", makefile.read_text(), re.MULTILINE))


def commands(document: Any) -> Iterator[str]:
    """Every shell line of a pipeline: GitHub's ``run`` and GitLab's script lists."""
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "run" and isinstance(value, str):
                yield from (line for line in value.splitlines() if line.strip())
            elif key in ("script", "before_script", "after_script") and isinstance(value, list):
                yield from (str(line) for line in value)
            else:
                yield from commands(value)
    elif isinstance(document, list):
        for value in document:
            yield from commands(value)


def images(document: Any) -> Iterator[str]:
    """Every container image a pipeline names (``image:``, a service's ``name``)."""
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "image" and isinstance(value, str):
                yield value
            elif key == "services" and isinstance(value, list):
                yield from (s["name"] if isinstance(s, dict) else str(s) for s in value)
            else:
                yield from images(value)
    elif isinstance(document, list):
        for value in document:
            yield from images(value)


def problems(path: Path, targets: set[str]) -> list[str]:
    """What is wrong with one pipeline file (empty when nothing is)."""
    try:
        document = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        return [f"{path.name}: not YAML: {error}"]
    found = []
    lines = list(commands(document))
    if not lines:
        found.append(f"{path.name}: runs no command")
    for line in lines:
        for target in re.findall(r"\bmake\s+([a-z][a-z0-9-]*)", line):
            if target not in targets:
                found.append(f"{path.name}: `{line}` runs make {target}, which the Makefile lacks")
        for script in re.findall(r"(?:^|\s)((?:\./)?scripts/[\w./-]+)", line):
            if not (REPO / script).exists():
                found.append(f"{path.name}: `{line}` runs {script}, which does not exist")
        if "test-portable" in line and "ENDPOINT=" not in line:
            found.append(f"{path.name}: `{line}` runs the portable suite without ENDPOINT=")
    localstack = [image for image in images(document) if "localstack/localstack" in image]
    for image in localstack:
        if image.rpartition(":")[2] != LOCALSTACK_VERSION:
            found.append(f"{path.name}: {image} is not LocalStack {LOCALSTACK_VERSION}")
    if not localstack:
        found.append(f"{path.name}: starts no localstack/localstack:{LOCALSTACK_VERSION} service")
    return found


def test_there_are_pipelines_for_github_and_gitlab() -> None:
    assert {p.name for p in PIPELINES} == {"github-actions.yml", "gitlab-ci.yml"}


@pytest.mark.parametrize("path", PIPELINES, ids=lambda p: p.name)
def test_pipeline_calls_what_the_repository_has(path: Path) -> None:
    assert problems(path, make_targets()) == []


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("make test-portable ENDPOINT", "make test-portble ENDPOINT", "lacks"),
        ("make test-portable ENDPOINT=http://localstack:4566", "make test-portable", "ENDPOINT"),
        ("localstack/localstack:4.14.0", "localstack/localstack:4.9.2", "is not LocalStack"),
        ("    - make test\n", "    - bash scripts/no-such-script.sh\n", "does not exist"),
        ("stages:\n", "stages: [\n", "not YAML"),
    ],
    ids=["unknown-target", "no-endpoint", "other-image", "missing-script", "not-yaml"],
)
def test_a_planted_mistake_is_found(tmp_path: Path, old: str, new: str, reported: str) -> None:
    """Each check fails on the mistake it is there for (the GitLab file, one change each)."""
    text = (CI_DIR / "gitlab-ci.yml").read_text()
    assert old in text
    planted = tmp_path / "gitlab-ci.yml"
    planted.write_text(text.replace(old, new, 1))
    found = problems(planted, make_targets())
    assert any(reported in problem for problem in found), found
