"""emulation.redshift_data.engine: the warehouse's active limit and its forgetting, in-process.

Both are bookkeeping a submit does under the warehouse lock: the count of active
statements (Redshift's limit of 500 queued or running) and forgetting the oldest ended
statements past what is kept. These tests pin the answers with small limits; the
integration tests (test_redshift_data.py) run the provider over HTTP.
"""

from __future__ import annotations

import threading
import time

import pytest

from sfn_patterns_localstack.emulation.redshift_data import engine

TARGET = engine.Target(account="000000000000", region="us-east-1", database="dev")


def _ended(warehouse: engine.Warehouse, statement: engine.Statement) -> None:
    deadline = time.monotonic() + 10
    while statement.status not in engine.TERMINAL:
        assert time.monotonic() < deadline, statement.status
        time.sleep(0.01)


@pytest.fixture
def warehouse():
    made = engine.Warehouse(workers=2)
    yield made
    made.close()


def test_past_the_active_limit_a_submit_is_refused_until_one_ends(
    warehouse: engine.Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_ACTIVE_STATEMENTS", 3)
    for _ in range(5):  # ended statements do not count
        _ended(warehouse, warehouse.submit(TARGET, ["SELECT 1"], is_batch=False))
    held = [
        warehouse.submit(TARGET, ["/* sfnp:sleep=30 */ SELECT 1"], is_batch=False) for _ in range(3)
    ]
    with pytest.raises(engine.DataApiError) as refused:
        warehouse.submit(TARGET, ["SELECT 1"], is_batch=False)
    assert refused.value.code == "ActiveStatementsExceededException"
    warehouse.cancel(TARGET.account, TARGET.region, held[0].id)
    _ended(warehouse, held[0])
    assert warehouse.submit(TARGET, ["SELECT 1"], is_batch=False).status not in engine.TERMINAL


def test_the_oldest_ended_statements_are_forgotten_and_running_ones_kept(
    warehouse: engine.Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_KEPT_STATEMENTS", 3)
    running = warehouse.submit(TARGET, ["/* sfnp:sleep=30 */ SELECT 1"], is_batch=False)
    quick = []
    for _ in range(5):
        quick.append(warehouse.submit(TARGET, ["SELECT 1"], is_batch=False))
        _ended(warehouse, quick[-1])
    kept = {s.id for s in warehouse.statements(TARGET.account, TARGET.region)}
    # Each submit past three forgot the oldest ended one: q1, q2, q3, never the runner.
    assert kept == {running.id, quick[3].id, quick[4].id}
    for gone in quick[:3]:
        with pytest.raises(engine.DataApiError, match="does not exist"):
            warehouse.get(TARGET.account, TARGET.region, gone.id)
    assert running.status not in engine.TERMINAL


def test_concurrent_submits_respect_the_active_limit(
    warehouse: engine.Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_ACTIVE_STATEMENTS", 4)
    accepted, refused = [], []

    def submit() -> None:
        try:
            accepted.append(
                warehouse.submit(TARGET, ["/* sfnp:sleep=30 */ SELECT 1"], is_batch=False)
            )
        except engine.DataApiError:
            refused.append(1)

    threads = [threading.Thread(target=submit) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (len(accepted), len(refused)) == (4, 6)


def test_a_client_token_answers_its_statement_until_the_statement_is_forgotten(
    warehouse: engine.Warehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_KEPT_STATEMENTS", 3)
    first = warehouse.submit(TARGET, ["SELECT 1"], is_batch=False, client_token="t0")
    assert warehouse.submit(TARGET, ["SELECT 2"], is_batch=False, client_token="t0") is first
    _ended(warehouse, first)
    for n in range(1, 10):
        _ended(
            warehouse, warehouse.submit(TARGET, ["SELECT 1"], is_batch=False, client_token=f"t{n}")
        )
    # Forgotten with its statement: the token map holds the kept statements' tokens only.
    assert len(warehouse._tokens) == 3
    again = warehouse.submit(TARGET, ["SELECT 1"], is_batch=False, client_token="t0")
    assert again.id != first.id
