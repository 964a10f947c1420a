"""scripts/bench_scale.py runs at its smallest sizes on the suite's LocalStack.

Besides keeping the script working, the smoke run checks what its tables measure
against oracles of their own: each limit held (peak concurrency from the executions'
histories), the request meter saw the pattern's calls, and a status query read only
the rows it returned.
"""

from __future__ import annotations

import pytest

from .smoke import run_smoke

pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.slow]

PATTERNS = ["dag-aggregate", "job-poller", "sqs-throttle", "status-table", "semaphore"]
COMMON_ROWS = (
    "wall time (s)",
    "items / s",
    "state transitions / item",
    "history events / item",
    "Lambda invocations / item",
    "DynamoDB requests / item",
    "SQS requests / item",
    "Step Functions requests / item",
    "peak LocalStack RSS",
    "largest DynamoDB item written (bytes)",
)


def tables(rows: list[str]) -> list[dict[str, list[str]]]:
    """The printed tables, each as {row label: cells}, split at each header row."""
    found: list[dict[str, list[str]]] = []
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if cells[0] == "" and cells[1].startswith("n = "):
            found.append({"": cells[1:]})
        elif found and not set(cells[0]) <= {"-"}:
            found[-1][cells[0]] = cells[1:]
    return found


def value(cells: list[str]) -> float:
    return float(cells[0].replace(",", "").split()[0])


def row(table: dict[str, list[str]], prefix: str) -> list[str]:
    return next(cells for label, cells in table.items() if label.startswith(prefix))


def test_bench_scale_smoke(localstack_endpoint: str, destroy_deployments: bool) -> None:
    rows = run_smoke("bench_scale", localstack_endpoint, timeout=900, keep=not destroy_deployments)
    found = tables(rows)
    assert len(found) == len(PATTERNS), rows
    dag, poller, throttle, status, semaphore = found
    for table in found:
        assert len(table[""]) == 2  # one size, and the slope column
        for label in COMMON_ROWS:
            assert row(table, label)[0] not in ("", None), label
    # The limits held: 2 slots (semaphore), MAX 2 (sqs-throttle), from the histories.
    assert value(row(semaphore, "peak concurrency")) <= 2
    assert value(row(throttle, "peak concurrency")) <= 2
    # Both jobs were started and ran (the executions' own start and stop times).
    assert 1 <= value(row(poller, "peak concurrency")) <= 2
    # 3 executions through 2 slots: at least the third waited, and no more than 3 did.
    assert 1 <= value(row(semaphore, "peak waiting")) <= 3
    # Somebody waited, so the hand-over latency was measured.
    assert row(semaphore, "admission after release, p90")[0] != "-"
    assert row(throttle, "admission after release, p90")[0] != "-"
    # The meter counted the patterns' own calls at LocalStack.
    assert value(row(semaphore, "DynamoDB requests / item")) > 0
    assert value(row(semaphore, "Step Functions requests / item")) > 0  # SendTaskSuccess
    assert value(row(throttle, "SQS requests / item")) >= 2  # receive and delete
    assert value(row(poller, "Lambda invocations / item")) >= 1
    assert value(row(dag, "state transitions / item")) > 0
    # The DAG's 6 tasks: a chain of 1 to 6 of them, and some running on average. (Not
    # bounded by the 4 slots: an execution outlives its slot by its report's end.)
    assert 1 <= value(row(dag, "longest dependency chain (tasks)")) <= 6
    assert 0 < value(row(dag, "task executions at once, mean")) <= 6
    assert value(row(dag, "seconds per task, all equal")) > 0
    # A status query by time range read only the rows it returned (the GSI's range).
    returned = value(row(status, "status query: rows returned"))
    assert returned == 10  # every task of the smoke's 10 (the query asks for up to 100)
    assert value(row(status, "status query: items read")) == returned
    assert value(row(status, "empty status query: rows")) == 0
