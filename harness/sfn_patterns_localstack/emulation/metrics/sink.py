"""One buffered path from the emulated services into CloudWatch's metric store.

LocalStack publishes a service metric (a Lambda ``Invocations``, the SQS queue
gauges) as an internal ``PutMetricData`` request: a boto3 client serializes it, the
gateway's handler chain parses it, and the provider opens the metric database and
commits, once per metric. Two per Lambda invoke made 360 invokes cost LocalStack 4.6
CPU-seconds instead of 3.0. The sink keeps that work off the invoke: a datum is
appended to a list under a lock, and a daemon thread writes whatever gathered, every
``FLUSH_SECONDS``, in one SQLite transaction on CloudWatch's own database, so a
flush costs the same for one datum as for a hundred.

Latency: a datum is readable at most ``FLUSH_SECONDS`` after it was put, far below
the 10 s alarm periods the tests use (AWS itself takes about a minute).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

LOG = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0


@dataclass(frozen=True)
class Datum:
    """One value of one metric, as PutMetricData's MetricDatum says it."""

    namespace: str
    name: str
    value: float
    dimensions: tuple[tuple[str, str], ...] = ()
    unit: str | None = None
    timestamp: float = field(default_factory=time.time)
    storage_resolution: int | None = None


def dimensions(**pairs: str) -> tuple[tuple[str, str], ...]:
    """Dimensions in the order CloudWatch's store keeps them (sorted by name)."""
    return tuple(sorted(pairs.items()))


class MetricSink:
    """A buffer of data per account and region, written to the store by one thread."""

    def __init__(self, flush_seconds: float = FLUSH_SECONDS) -> None:
        self._lock = threading.Lock()
        self._pending: list[tuple[str, str, Datum]] = []
        self._flush_seconds = flush_seconds
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def put(self, account_id: str, region: str, data: Iterable[Datum]) -> None:
        """Queue data for the next flush; never blocks on the store."""
        with self._lock:
            self._pending.extend((account_id, region, datum) for datum in data)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="sfnp-metric-sink", daemon=True
                )
                self._thread.start()

    def flush(self) -> int:
        """Write what is pending now; return how many data were written."""
        with self._lock:
            batch, self._pending = self._pending, []
        if not batch:
            return 0
        try:
            _write(batch)
        except Exception:  # a metric is never worth breaking a service for
            LOG.exception("sfn-patterns metric sink: %d data not written", len(batch))
            return 0
        return len(batch)

    def _run(self) -> None:
        while True:
            self._wake.wait(self._flush_seconds)
            self._wake.clear()
            self.flush()


def cloudwatch_provider():
    """LocalStack's CloudWatch provider (v2) object (started if it is not yet)."""
    from localstack.services.plugins import SERVICE_PLUGINS

    return SERVICE_PLUGINS.require("cloudwatch").lifecycle_hook


def _write(batch: list[tuple[str, str, Datum]]) -> None:
    """One transaction for the whole batch, in the rows add_metric_data would write."""
    database = cloudwatch_provider().cloudwatch_database
    rows = [
        (
            account_id,
            region,
            datum.name,
            datum.namespace,
            int(datum.timestamp),
            "".join(f"{name}={value}\t" for name, value in sorted(datum.dimensions)) or None,
            datum.unit,
            datum.storage_resolution,
            datum.value,
        )
        for account_id, region, datum in batch
    ]
    with database.DATABASE_LOCK, sqlite3.connect(database.METRICS_DB) as conn:
        conn.executemany(
            f"INSERT INTO {database.TABLE_SINGLE_METRICS} (account_id, region, metric_name,"
            " namespace, timestamp, dimensions, unit, storage_resolution, value)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.commit()


SINK = MetricSink()
