"""Render and validate Amazon States Language definitions offline.

Terraform renders the modules' ASL with ``templatefile``; the templates in
``templates/<pattern>/*.asl.json.tftpl`` use only ``${name}`` interpolation (no
directives), so this module renders them identically in unit tests, and then
checks them with LocalStack's ASL parser and static analyser (the validation
LocalStack's CreateStateMachine applies), with no AWS call.
"""

from __future__ import annotations

import json

from sfn_patterns_cli.templating import render_tftpl

__all__ = ["render_tftpl", "validate"]


def validate(definition: str | dict) -> dict:
    """Parse and statically analyse a definition; return it as a dict.

    Raises ValueError naming the problem when the definition is not valid JSON or
    not valid ASL (unknown state types, missing Next/End, bad paths, ...).
    """
    from localstack.services.stepfunctions.asl.static_analyser.static_analyser import (
        StaticAnalyser,
    )

    text = definition if isinstance(definition, str) else json.dumps(definition)
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"definition is not JSON: {error}") from error
    try:
        StaticAnalyser().analyse(text)
    except Exception as error:
        raise ValueError(f"invalid ASL: {error}") from error
    _check_transitions(parsed, "")
    return parsed


def _targets(state: dict) -> list[str]:
    targets = [state.get("Next"), state.get("Default")]
    targets += [choice.get("Next") for choice in state.get("Choices", [])]
    targets += [catcher.get("Next") for catcher in state.get("Catch", [])]
    return [target for target in targets if target]


def _check_transitions(machine: dict, where: str) -> None:
    """Every StartAt/Next/Default/Catch target exists, and every state is reachable.

    LocalStack's analyser accepts a ``Next`` that names no state; AWS rejects it
    at CreateStateMachine. Nested machines (Map, Parallel) are checked too.
    """
    states = machine.get("States", {})
    start = machine.get("StartAt")
    if start not in states:
        raise ValueError(f"invalid ASL: {where or 'top level'}: StartAt {start!r} is not a state")
    for name, state in states.items():
        for target in _targets(state):
            if target not in states:
                raise ValueError(f"invalid ASL: state {where}{name!r} goes to unknown {target!r}")
        for nested_key in ("ItemProcessor", "Iterator"):
            if nested_key in state:
                _check_transitions(state[nested_key], f"{where}{name}/")
        for index, branch in enumerate(state.get("Branches", [])):
            _check_transitions(branch, f"{where}{name}[{index}]/")
    reachable, pending = set(), [start]
    while pending:
        name = pending.pop()
        if name not in reachable:
            reachable.add(name)
            pending += _targets(states[name])
    unreachable = sorted(set(states) - reachable)
    if unreachable:
        raise ValueError(f"invalid ASL: {where or 'top level'}: unreachable states {unreachable}")
