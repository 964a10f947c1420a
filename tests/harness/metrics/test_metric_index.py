"""The metric store's time index (emulation/metrics/metric_index.py) changes no answer.

The same random data is queried through LocalStack's own ``get_metric_data_stat`` with
and without the indexes; the answers must be equal (to the last bit for whole numbers such as
counts; a sum of fractions may differ in its last bit,
since SQLite adds a period's rows in time order instead of insertion order), and
SQLite must use the index
for the timestamp range (else the patch would cost a write per datum for nothing).
"""

from __future__ import annotations

import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sfn_patterns_localstack.emulation.metrics import metric_index


@pytest.fixture
def database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from localstack.services.cloudwatch.cloudwatch_database_helper import CloudwatchDatabase

    def make(name: str, indexed: bool) -> CloudwatchDatabase:
        root = tmp_path / name
        path = root / "metrics.db"
        monkeypatch.setattr(CloudwatchDatabase, "CLOUDWATCH_DATA_ROOT", str(root))
        monkeypatch.setattr(CloudwatchDatabase, "METRICS_DB", str(path))
        monkeypatch.setattr(CloudwatchDatabase, "METRICS_DB_READ_ONLY", f"file:{path}?mode=ro")
        db = CloudwatchDatabase()
        if indexed:
            metric_index.add_indexes(db)
        # Pin the paths on the instance: the class attributes change for the next one.
        db.METRICS_DB, db.METRICS_DB_READ_ONLY = str(path), f"file:{path}?mode=ro"
        return db

    return make


def _fill(db, seed: int, integers: bool) -> None:
    rng = random.Random(seed)
    single, aggregated = [], []
    for i in range(3000):
        row = (
            "000000000000",
            rng.choice(["us-east-1", "eu-west-1"]),
            rng.choice(["Invocations", "Errors", "ApproximateNumberOfMessagesVisible"]),
            rng.choice(["AWS/Lambda", "AWS/SQS"]),
            1_700_000_000 + rng.randrange(0, 3600),
            rng.choice([None, "FunctionName=a\t", "FunctionName=ab\t", "QueueName=q\t"]),
            rng.choice([None, "Count"]),
            60,
        )
        value = rng.randint(0, 10) if integers else rng.uniform(0, 10)
        single.append((i, *row, value))
        aggregated.append((i, *row, rng.randint(1, 5), value * 3, value / 2, value * 2))
    with sqlite3.connect(db.METRICS_DB) as conn:
        conn.executemany("INSERT INTO SINGLE_METRICS VALUES (?,?,?,?,?,?,?,?,?,?)", single)
        conn.executemany(
            "INSERT INTO AGGREGATED_METRICS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", aggregated
        )


@pytest.mark.parametrize("integers", [True, False], ids=["counts", "fractions"])
def test_answers_are_unchanged_and_the_index_is_used(database, integers: bool) -> None:
    plain, indexed = database("plain", False), database("indexed", True)
    _fill(plain, 7, integers)
    _fill(indexed, 7, integers)
    start = datetime.fromtimestamp(1_700_000_000 + 300, tz=UTC)
    end = datetime.fromtimestamp(1_700_000_000 + 2700, tz=UTC)
    compared = 0
    for namespace, name in [("AWS/Lambda", "Invocations"), ("AWS/SQS", "Errors")]:
        for stat in ("Sum", "Average", "Maximum", "Minimum", "SampleCount"):
            for dims in ([], [{"Name": "FunctionName", "Value": "a"}]):
                for unit in (None, "Count"):
                    query = {
                        "Id": "q",
                        "MetricStat": {
                            "Metric": {
                                "Namespace": namespace,
                                "MetricName": name,
                                "Dimensions": [dict(d) for d in dims],
                            },
                            "Period": 60,
                            "Stat": stat,
                            **({"Unit": unit} if unit else {}),
                        },
                    }
                    args = ("000000000000", "us-east-1", query, start, end, None)
                    expected = plain.get_metric_data_stat(*args)
                    got = indexed.get_metric_data_stat(*args)
                    if integers:
                        assert got == expected
                    else:  # rows are added in time order, not insertion order: last bits
                        assert got["timestamps"] == expected["timestamps"]
                        assert got["values"] == pytest.approx(expected["values"], rel=1e-12)
                    compared += bool(expected["values"])
    assert compared >= 10  # the queries found data: equal answers are not two empty lists
    with sqlite3.connect(indexed.METRICS_DB) as conn:
        plan = " ".join(
            str(row)
            for row in conn.execute(
                "EXPLAIN QUERY PLAN SELECT value FROM SINGLE_METRICS WHERE metric_name = ?"
                " AND namespace = ? AND timestamp >= ? AND timestamp < ?",
                ("Invocations", "AWS/Lambda", 1, 2),
            )
        )
    assert "idx_sfnp_single_metrics_time" in plan and "timestamp>?" in plan


def test_applies_to_the_pinned_localstack() -> None:
    assert metric_index.apply() is True
