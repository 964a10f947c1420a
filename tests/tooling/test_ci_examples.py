"""The sample pipelines in examples/ci parse, call only what this repository has, and
install what the bootstrap they run needs.

A team copies them into its CI, so a pipeline that names a make target, script or
LocalStack image this repository does not have, or a job that lacks a tool
scripts/bootstrap.sh needs, fails there, far from here. Checked: each file parses as
YAML; every ``make TARGET`` it runs is a target of the Makefile; every ``scripts/...``
path it runs exists; the LocalStack image it starts is the release the harness is
pinned to; the portable job passes an ``ENDPOINT``. Per job, with what it inherits:
a job that runs make has the Python scripts/find-python.sh wants; one whose target
runs the full bootstrap (depends on ``bootstrap``) installs Go and Node.js at least as
new as bootstrap.sh's own errors ask for, and not Debian's golang-go; one that runs
``make test`` has a Python for each Lambda runtime bootstrap.sh looks for (listed in
setup-python, or pyenv, with which bootstrap.sh installs them). The versions wanted
are read from the scripts, so a raised requirement there fails here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

REPO = Path(__file__).resolve().parents[2]
CI_DIR = REPO / "examples" / "ci"
PIPELINES = sorted(CI_DIR.glob("*.yml"))
# `make TARGET` where a command starts (not the `make` package of an apt-get line).
MAKE_RUN = re.compile(r"(?:^|&&|\|\||[;|])\s*make\s+([a-z][a-z0-9-]*)")
# GitLab's top-level keys that are not jobs.
GITLAB_KEYWORDS = {
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
}


def make_targets(makefile: Path = REPO / "Makefile") -> set[str]:
    """The targets the Makefile defines (``name: ...`` at the start of a line)."""
    return set(re.findall(r"^([a-z][a-z0-9-]*):", makefile.read_text(), re.MULTILINE))


def full_bootstrap_targets(makefile: Path = REPO / "Makefile") -> set[str]:
    """The targets that run the full scripts/bootstrap.sh: those depending on
    ``bootstrap``, directly or through another target (``make demo`` runs its own
    ``--demo`` profile instead)."""
    rules = {
        name: prerequisites.split()
        for name, prerequisites in re.findall(
            r"^([a-z][a-z0-9-]*):([^#\n]*)", makefile.read_text(), re.MULTILINE
        )
    }
    full = {"bootstrap"}
    while grown := {name for name, needs in rules.items() if full & set(needs)} - full:
        full |= grown
    return full


Version = tuple[float, ...]


def version(text: str) -> Version | None:
    """``"1.26.8"`` -> (1, 26, 8), ``"22.x"`` -> (22,), setup-go's ``"stable"`` -> (inf,);
    None for anything else (a version this check cannot compare)."""
    if text.strip() == "stable":
        return (math.inf,)
    found = re.fullmatch(r"v?(\d+(?:\.\d+)*)(?:\.x)?", text.strip())
    return tuple(int(part) for part in found[1].split(".")) if found else None


@dataclass(frozen=True)
class Needs:
    """What scripts/bootstrap.sh asks of a machine, read from its own messages."""

    python: str  # scripts/find-python.sh's want=
    go: Version
    node: Version
    runtimes: tuple[str, ...]  # the Lambda runtimes' Pythons besides its own


def read_needs(bootstrap: str, find_python: str) -> Needs:
    """The versions the scripts name: the Go of bootstrap.sh's error, the Node.js it
    passes to require-node.sh, the Pythons of its Lambda runtimes step,
    find-python.sh's wanted Python."""
    found = {
        "python": re.search(r"^want=(\d+\.\d+)$", find_python, re.MULTILINE),
        "go": re.search(r"install Go (\d+(?:\.\d+)*)\+", bootstrap),
        "node": re.search(r'require-node\.sh"? (\d+(?:\.\d+)*)$', bootstrap, re.MULTILINE),
        "runtimes": re.search(r"^for version in ((?:\d+\.\d+ ?)+); do", bootstrap, re.MULTILINE),
    }
    missing = sorted(key for key, match in found.items() if match is None)
    if missing:
        raise ValueError(
            f"scripts/bootstrap.sh or scripts/find-python.sh no longer states {missing} "
            "as this check reads it: update read_needs in tests/tooling/test_ci_examples.py"
        )
    return Needs(
        python=found["python"][1],
        go=version(found["go"][1]) or (),
        node=version(found["node"][1]) or (),
        runtimes=tuple(found["runtimes"][1].split()),
    )


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


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """GitLab's ``extends``: mappings merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in over.items():
        both = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merged(out[key], value) if both else value
    return out


def jobs(document: Any) -> dict[str, dict[str, Any]]:
    """Each job of a pipeline with what it inherits: GitHub's ``jobs``; GitLab's top-level
    jobs with their ``extends`` templates and the global ``variables`` merged in."""
    if not isinstance(document, dict):
        return {}
    if isinstance(document.get("jobs"), dict):
        return {name: job for name, job in document["jobs"].items() if isinstance(job, dict)}

    def resolve(job: dict[str, Any]) -> dict[str, Any]:
        bases = job.get("extends", [])
        out: dict[str, Any] = {}
        for base in [bases] if isinstance(bases, str) else bases:
            out = merged(out, resolve(document.get(base) or {}))
        return merged(out, {key: value for key, value in job.items() if key != "extends"})

    return {
        name: merged({"variables": document.get("variables") or {}}, resolve(job))
        for name, job in document.items()
        if isinstance(name, str)
        and not name.startswith(".")
        and name not in GITLAB_KEYWORDS
        and isinstance(job, dict)
    }


def action_inputs(job: dict[str, Any], action: str, key: str) -> list[str]:
    """The ``with: key`` of each step of ``job`` that uses ``action`` (any version)."""
    return [
        str((step.get("with") or {}).get(key, ""))
        for step in job.get("steps") or []
        if isinstance(step, dict) and str(step.get("uses", "")).startswith(f"{action}@")
    ]


def image_tag(job: dict[str, Any], repository: str) -> list[str]:
    """The leading version of ``job``'s image tag when it is ``repository:...``."""
    image = job.get("image", "")
    name = str(image.get("name", "")) if isinstance(image, dict) else str(image)
    found = re.match(rf"{re.escape(repository)}:(\d+(?:\.\d+)*)", name)
    return [found[1]] if found else []


def used_variable(job: dict[str, Any], name: str, lines: list[str]) -> list[str]:
    """The value of variable ``name`` when one of the job's commands uses it."""
    value = (job.get("variables") or {}).get(name)
    if value is None or not any(re.search(rf"\$\{{?{name}\b", line) for line in lines):
        return []
    return [str(value)]


def job_problems(
    file: str, name: str, job: dict[str, Any], needs: Needs, full: set[str]
) -> list[str]:
    """What a job lacks of what the bootstrap of the make targets it runs needs."""
    lines = list(commands(job))
    targets = sorted({target for line in lines for target in MAKE_RUN.findall(line)})
    if not targets:
        return []
    where = f"{file}: job {name} (make {', '.join(targets)})"
    pythons = [
        *(
            v
            for text in action_inputs(job, "actions/setup-python", "python-version")
            for v in text.split()
        ),
        *image_tag(job, "python"),
    ]
    found = []
    if needs.python not in pythons:
        found.append(
            f"{where} has no Python {needs.python} (scripts/find-python.sh): "
            f"use actions/setup-python or a python:{needs.python} image"
        )
    if full & set(targets):
        installs = {
            "Go": (
                needs.go,
                action_inputs(job, "actions/setup-go", "go-version")
                + used_variable(job, "GO_VERSION", lines)
                + image_tag(job, "golang"),
                "actions/setup-go, GO_VERSION with the official tarball, or a golang image",
            ),
            "Node.js": (
                needs.node,
                action_inputs(job, "actions/setup-node", "node-version")
                + used_variable(job, "NODE_VERSION", lines)
                + image_tag(job, "node"),
                "actions/setup-node, NODE_VERSION with the official tarball, or a node image",
            ),
        }
        for tool, (least, versions, how) in installs.items():
            known = [version(v) for v in versions]
            # "1.26" is the newest 1.26.x: compared on the parts it names.
            if not known or any(v is None or v < least[: len(v)] for v in known):
                wanted = ".".join(str(part) for part in least)
                found.append(
                    f"{where}: the full scripts/bootstrap.sh needs {tool} {wanted} or later, "
                    f"the job installs {versions or 'none'}: use {how}"
                )
        if any(re.search(r"\bgolang-go\b", line) for line in lines):
            found.append(
                f"{where} installs Debian's golang-go (1.19 on bookworm), older than the "
                "Go scripts/bootstrap.sh needs: install an official Go instead"
            )
    pyenv = any(re.search(r"\bpyenv\b", line) for line in lines)
    missing = [v for v in needs.runtimes if v not in pythons]
    if "test" in targets and missing and not pyenv:
        found.append(
            f"{where} has no Python {', '.join(missing)} for the Lambda runtimes the tests "
            "deploy functions on: list them in actions/setup-python, or install pyenv "
            "(scripts/bootstrap.sh installs them with it)"
        )
    return found


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
        for target in MAKE_RUN.findall(line):
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
    needs = read_needs(
        (REPO / "scripts" / "bootstrap.sh").read_text(),
        (REPO / "scripts" / "find-python.sh").read_text(),
    )
    full = full_bootstrap_targets()
    for name, job in jobs(document).items():
        found.extend(job_problems(path.name, name, job, needs, full))
    return found


def test_there_are_pipelines_for_github_and_gitlab() -> None:
    assert {p.name for p in PIPELINES} == {"github-actions.yml", "gitlab-ci.yml"}


@pytest.mark.parametrize("path", PIPELINES, ids=lambda p: p.name)
def test_pipeline_calls_what_the_repository_has(path: Path) -> None:
    assert problems(path, make_targets()) == []


def test_the_targets_on_the_full_bootstrap_are_read_from_the_makefile(tmp_path: Path) -> None:
    makefile = tmp_path / "Makefile"
    makefile.write_text(
        "bootstrap: ## the toolchain\n\tbash scripts/bootstrap.sh\n"
        "lint: bootstrap ## lint\nchecks: lint docs ## through lint\n"
        "demo: ## its own profile\n\tbash scripts/bootstrap.sh --demo\n"
    )
    assert full_bootstrap_targets(makefile) == {"bootstrap", "lint", "checks"}
    real = full_bootstrap_targets()
    assert {"test", "fast-checks"} <= real and "demo" not in real


def test_the_needs_are_read_from_the_scripts() -> None:
    needs = read_needs(
        (REPO / "scripts" / "bootstrap.sh").read_text(),
        (REPO / "scripts" / "find-python.sh").read_text(),
    )
    assert needs.python == "3.13" and needs.runtimes[0] == "3.9"
    assert needs.go >= (1, 21) and needs.node >= (18,)
    with pytest.raises(ValueError, match="no longer states"):
        read_needs("install Go 1.24+\nrequire-node.sh 18.0", "want=3.13")


GITLAB_PYENV = (
    '    - test -x "$PYENV_ROOT/bin/pyenv" || git clone --depth 1 '
    'https://github.com/pyenv/pyenv.git "$PYENV_ROOT"\n'
)
GITHUB_NODE = '      - uses: actions/setup-node@v4\n        with:\n          node-version: "22"\n'


@pytest.mark.parametrize(
    ("file", "old", "new", "reported"),
    [
        ("gitlab-ci.yml", "make test-portable ENDPOINT", "make test-portble ENDPOINT", "lacks"),
        (
            "gitlab-ci.yml",
            "make test-portable ENDPOINT=http://localstack:4566",
            "make test-portable",
            "ENDPOINT",
        ),
        (
            "gitlab-ci.yml",
            "localstack/localstack:4.14.0",
            "localstack/localstack:4.9.2",
            "is not LocalStack",
        ),
        (
            "gitlab-ci.yml",
            "    - make test\n",
            "    - bash scripts/no-such-script.sh\n",
            "does not exist",
        ),
        ("gitlab-ci.yml", "stages:\n", "stages: [\n", "not YAML"),
        ("gitlab-ci.yml", 'GO_VERSION: "1.26.8"', 'GO_VERSION: "1.19"', "needs Go "),
        ("gitlab-ci.yml", 'NODE_VERSION: "20.20.2"', 'NODE_VERSION: "16.20.2"', "needs Node.js"),
        ("gitlab-ci.yml", "recommends make time", "recommends golang-go make time", "golang-go"),
        (
            "gitlab-ci.yml",
            "image: python:3.13-bookworm",
            "image: python:3.11-bookworm",
            "no Python 3.13",
        ),
        ("gitlab-ci.yml", GITLAB_PYENV, "", "no Python 3.9, 3.10, 3.11, 3.12"),
        ("github-actions.yml", 'go-version: "1.26"', 'go-version: "1.19"', "needs Go "),
        ("github-actions.yml", GITHUB_NODE, "", "needs Node.js"),
        ("github-actions.yml", "            3.9\n", "", "no Python 3.9 for"),
    ],
    ids=[
        "unknown-target",
        "no-endpoint",
        "other-image",
        "missing-script",
        "not-yaml",
        "old-go",
        "old-node",
        "debian-go",
        "no-python-3.13",
        "no-pyenv",
        "github-old-go",
        "github-no-node",
        "github-no-python-3.9",
    ],
)
def test_a_planted_mistake_is_found(
    tmp_path: Path, file: str, old: str, new: str, reported: str
) -> None:
    """Each check fails on the mistake it is there for (one change to one file each)."""
    text = (CI_DIR / file).read_text()
    assert old in text
    planted = tmp_path / file
    planted.write_text(text.replace(old, new, 1))
    found = problems(planted, make_targets())
    assert any(reported in problem for problem in found), found
