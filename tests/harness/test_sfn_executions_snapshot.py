"""fixes.sfn_executions_snapshot: a loop over every execution survives a concurrent start.

LocalStack's own ``StepFunctionsProvider._get_executions`` (what SendTaskSuccess
calls) runs over a store whose dict grows while the loop's ``lambda`` runs, the way a
StartExecution on another thread grows it: over LocalStack's dict it raises "mutated
during iteration" (the InternalError bench_scale met); over the patched store's dict it
returns the running executions it was asked for.
"""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

import pytest
from localstack.aws.api.stepfunctions import ExecutionStatus
from localstack.services.stepfunctions.backend.store import SFNStore
from localstack.services.stepfunctions.provider import StepFunctionsProvider

from sfn_patterns_localstack.emulation.fixes import sfn_executions_snapshot


class _Starting:
    """An execution whose status read starts another one (a StartExecution mid-loop)."""

    def __init__(self, executions: dict[str, Any], name: str) -> None:
        self.executions, self.name = executions, name

    @property
    def exec_status(self) -> str:
        self.executions[f"{self.name}-started-meanwhile"] = SimpleNamespace(
            exec_status=ExecutionStatus.RUNNING
        )
        return ExecutionStatus.RUNNING


def running(executions: dict[str, Any]) -> list[Any]:
    provider = SimpleNamespace(get_store=lambda context: SimpleNamespace(executions=executions))
    return StepFunctionsProvider._get_executions(provider, None, ExecutionStatus.RUNNING)


def test_the_store_makes_its_executions_with_snapshot_values() -> None:
    assert sfn_executions_snapshot.apply() is True
    assert sfn_executions_snapshot.apply() is True  # once or twice, the same
    assert isinstance(SFNStore().executions, sfn_executions_snapshot.SnapshotValues)


@pytest.mark.parametrize("kind", [OrderedDict, sfn_executions_snapshot.SnapshotValues])
def test_a_start_during_the_running_filter(kind: type) -> None:
    executions = kind()
    for i in range(3):
        executions[f"e{i}"] = _Starting(executions, f"e{i}")
    if kind is OrderedDict:  # LocalStack's own dict
        with pytest.raises(RuntimeError, match="mutated during iteration"):
            running(executions)
        return
    found = running(executions)
    assert [e.name for e in found] == ["e0", "e1", "e2"]  # those there when it began
    assert len(executions) == 6  # and the starts went in


def test_other_dict_operations_are_the_ordered_dicts() -> None:
    executions = sfn_executions_snapshot.SnapshotValues(a=1, b=2)
    executions["c"] = 3
    del executions["a"]
    assert list(executions) == ["b", "c"]
    assert executions.values() == [2, 3]
    assert executions.get("b") == 2
