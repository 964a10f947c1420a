"""Check Amazon States Language definitions with asl-validator, many in one node process.

LocalStack's parser is lenient: it accepts a ``Next`` that names no state, which AWS
rejects at CreateStateMachine. asl-validator (npm; the validator the Serverless
Framework's Step Functions plugin runs) checks a definition against the ASL schemas
and its transitions, offline. ``scripts/bootstrap.sh`` installs the version pinned by
``scripts/asl-validator/package-lock.json`` into the project cache, and
``scripts/asl-validator/validate.cjs`` validates a whole batch in one node start (about
0.8 CPU-seconds for the first definition, a millisecond for each further one).

The test session feeds it every definition LocalStack received
(:mod:`sfn_patterns_localstack.asl_recorder`, ``tests/asl_check.py``); unit tests feed
it definitions rendered in Python.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sfn_patterns_localstack import npm_tools

REPO_ROOT = npm_tools.REPO_ROOT
SOURCE = REPO_ROOT / "scripts" / "asl-validator"


@dataclass(frozen=True)
class Definition:
    """One definition to check: the state machine's name, where it came from, its text."""

    name: str
    source: str
    text: str


@dataclass(frozen=True)
class Problem:
    """One finding of asl-validator, located at a state where it names one."""

    name: str
    source: str
    state: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.name} ({self.source}): state {self.state}: {self.code}: {self.message}"


def version() -> str:
    """The asl-validator version pinned in scripts/asl-validator/package.json."""
    return npm_tools.version(SOURCE, "asl-validator")


def install_dir() -> Path:
    """Where scripts/bootstrap.sh installs the pinned asl-validator (node_modules inside)."""
    return npm_tools.install_dir(SOURCE, "asl-validator")


def validate(definitions: Iterable[Definition], *, fresh: bool = False) -> list[Problem]:
    """Check every definition in one node process; return the problems (empty: all valid).

    Raises RuntimeError when node or the installed validator is missing, or node fails.
    ``fresh`` makes asl-validator build its schemas for every definition, as its own
    CLI does (slow; only to compare with the shared build).
    """
    batch = list(definitions)
    if not batch:
        return []
    payload = {"definitions": [{"id": str(i), "definition": d.text} for i, d in enumerate(batch)]}
    flags = ["--fresh"] if fresh else []
    output = npm_tools.run(SOURCE, "validate.cjs", "asl-validator", payload, *flags)
    problems: list[Problem] = []
    for result in json.loads(output):
        if result["valid"]:
            continue
        definition = batch[int(result["id"])]
        for error in result["errors"]:
            for state in states_concerned(definition.text, error["message"]):
                problems.append(
                    Problem(
                        definition.name,
                        definition.source,
                        state,
                        error["code"],
                        error["message"],
                    )
                )
    return problems


def report(problems: Iterable[Problem]) -> str:
    """The problems, one line each, for a failure message."""
    return "\n".join(str(problem) for problem in problems)


# -- which state a message is about ----------------------------------------------------------
# asl-validator names the state in most messages ("/States/A/Type is invalid",
# 'State "A" MUST contain ...', "State C is not reachable") but not in a missing
# transition target ("Missing 'StartAt'|'Next'|'Default' target: B"): that one is located
# at every state (or StartAt) that goes to the missing name.
_MISSING_TARGET = re.compile(r"target: (?P<target>.+)$")
_SCHEMA_PATH = re.compile(r"^(?P<path>/\S*?) is invalid")
_STATE_NAMED = re.compile(r'^State (?!machine )"?(?P<state>.+?)"? (?:is|MUST|must)\b')


def states_concerned(text: str, message: str) -> list[str]:
    """The states (quoted, nested ones as ``'Map'/'Inner'``) a validator message is about."""
    try:
        machine = json.loads(text)
    except ValueError:
        return ["(not JSON)"]
    if match := _MISSING_TARGET.search(message):
        found = [
            where for where, goes_to in _transitions(machine, ()) if goes_to == match["target"]
        ]
        return found or ["(unknown)"]
    if match := _SCHEMA_PATH.match(message):
        parts = match["path"].strip("/").split("/")
        names = [parts[i + 1] for i, part in enumerate(parts[:-1]) if part == "States"]
        return [_where(tuple(names))] if names else ["(top level)"]
    if match := _STATE_NAMED.match(message):
        return [repr(match["state"])]
    return ["(state machine)"]


def _where(path: tuple[str, ...]) -> str:
    return "/".join(repr(name) for name in path) or "StartAt"


def _transitions(machine: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(where, target) for StartAt and every Next, Default, Choice and Catch, nested too."""
    if not isinstance(machine, dict):
        return
    yield (_where(path) + (" StartAt" if path else ""), machine.get("StartAt"))
    for name, state in (machine.get("States") or {}).items():
        if not isinstance(state, dict):
            continue
        here = (*path, name)
        targets = [state.get("Next"), state.get("Default")]
        targets += [choice.get("Next") for choice in state.get("Choices", [])]
        targets += [catcher.get("Next") for catcher in state.get("Catch", [])]
        for target in targets:
            if target:
                yield (_where(here), target)
        for key in ("ItemProcessor", "Iterator"):
            yield from _transitions(state.get(key), here)
        for branch in state.get("Branches", []):
            yield from _transitions(branch, here)


def load_recorded(directory: Path) -> list[Definition]:
    """The definitions :mod:`asl_recorder` wrote under ``directory`` (any depth)."""
    found = []
    for path in sorted(directory.rglob("*.json")):
        body = json.loads(path.read_text())
        found.append(Definition(body["name"], str(path), body["definition"]))
    return found
