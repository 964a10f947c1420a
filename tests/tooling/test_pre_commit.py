"""The pre-commit configuration names hooks that exist, files this repository has, and the
ruff this repository pins.

A contributor who runs ``pre-commit install`` gets these hooks on every commit; a hook id
the hook repository does not have, a config file that moved, or a ruff other than the
lock's (which formats differently from ``make lint``) fails there, far from here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / ".pre-commit-config.yaml"

# The hook ids each repository publishes (its .pre-commit-hooks.yaml), for the checks
# `make fast-checks` runs: fmt, validate, terraform-docs, tflint, ruff.
KNOWN_HOOKS = {
    "https://github.com/antonbabenko/pre-commit-terraform": {
        "terraform_fmt",
        "terraform_validate",
        "terraform_docs",
        "terraform_tflint",
    },
    "https://github.com/astral-sh/ruff-pre-commit": {"ruff", "ruff-check", "ruff-format"},
}
REQUIRED = {"terraform_fmt", "terraform_validate", "terraform_docs", "terraform_tflint", "ruff"}


def problems(config: dict[str, Any], repo: Path = REPO) -> list[str]:
    """What is wrong with a pre-commit configuration (empty: nothing)."""
    found: list[str] = []
    ids: set[str] = set()
    lock = (repo / "requirements.lock").read_text()
    pinned_ruff = re.search(r"^ruff==(\S+)$", lock, re.MULTILINE)
    for entry in config.get("repos", []):
        url, rev = entry.get("repo"), str(entry.get("rev", ""))
        if url not in KNOWN_HOOKS:
            found.append(f"unexpected hook repository {url}")
            continue
        if not re.fullmatch(r"v\d+\.\d+\.\d+", rev):
            found.append(f"{url}: rev {rev!r} is not a release tag vX.Y.Z")
        if url.endswith("ruff-pre-commit") and pinned_ruff and rev != f"v{pinned_ruff[1]}":
            found.append(f"ruff-pre-commit {rev} is not the lock's ruff v{pinned_ruff[1]}")
        for hook in entry.get("hooks", []):
            ids.add(hook["id"])
            if hook["id"] not in KNOWN_HOOKS[url]:
                found.append(f"{url} has no hook {hook['id']!r}")
            for arg in hook.get("args", []):
                for path in re.findall(r"__GIT_WORKING_DIR__/(\S+)", arg):
                    if not (repo / path).is_file():
                        found.append(f"hook {hook['id']}: {path} does not exist")
    found += [f"missing hook {name}" for name in sorted(REQUIRED - ids)]
    return found


def test_the_configuration_is_right() -> None:
    assert problems(yaml.safe_load(CONFIG.read_text())) == []


@pytest.mark.parametrize(
    ("plant", "message"),
    [
        (lambda c: c["repos"][1].update(rev="v0.1.0"), "is not the lock's ruff"),
        (lambda c: c["repos"][0]["hooks"].pop(0), "missing hook terraform_fmt"),
        (lambda c: c["repos"][0]["hooks"][0].update(id="terraform_format"), "has no hook"),
        (lambda c: c["repos"][0].update(rev="master"), "not a release tag"),
        (
            lambda c: c["repos"][0]["hooks"][3].update(
                args=["--args=--config=__GIT_WORKING_DIR__/.tflint.yml"]
            ),
            ".tflint.yml does not exist",
        ),
    ],
)
def test_each_check_fails_on_a_planted_mistake(plant: Any, message: str) -> None:
    config = yaml.safe_load(CONFIG.read_text())
    plant(config)
    assert any(message in problem for problem in problems(config)), problems(config)
