"""CloudWatch's metric store finds a period's data by time, not by reading the metric's history.

LocalStack 4.14.0 keeps metric data in SQLite, indexed by ``(metric_name, namespace)``.
GetMetricData (so every alarm evaluation: ``EvaluationPeriods + 2`` queries a step,
alarm_evaluation.py) runs one sub-query per period of the window, and each one read
every row the metric ever had before filtering on the period's timestamps. The rows
grow all the time a deployment lives (SQS gauges every 5 s per queue, a Lambda datum per
invoke), so each evaluation cost more than the one before: 2.0 CPU-seconds of the
alarm scheduler on tests/job_poller/test_example.py (emulation/profiler.py).

The patch adds ``(metric_name, namespace, timestamp)`` indexes on both tables when
LocalStack creates its database. SQLite pushes the query's WHERE into both branches of
its ``UNION ALL`` and reads only the period's rows. An index changes how rows are
found, never which: the answers are the same, exactly for whole numbers such as
counts; a sum of fractions may differ in its last bit, as a period's rows are then
added in time order rather than insertion order (tests/harness/metrics/test_metric_index.py).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_sfnp_single_metrics_time"
    " ON SINGLE_METRICS (metric_name, namespace, timestamp)",
    "CREATE INDEX IF NOT EXISTS idx_sfnp_aggregated_metrics_time"
    " ON AGGREGATED_METRICS (metric_name, namespace, timestamp)",
)


def add_indexes(database: Any) -> None:
    """Create the time indexes in ``database``'s file (idempotent)."""
    with database.DATABASE_LOCK, sqlite3.connect(database.METRICS_DB) as conn:
        for statement in INDEXES:
            conn.execute(statement)
        conn.commit()


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.cloudwatch.cloudwatch_database_helper import CloudwatchDatabase
    except ImportError:
        return False
    original = CloudwatchDatabase.__init__
    if version.__version__ != LOCALSTACK_VERSION:
        LOG.warning("sfn-patterns metric index not applied (localstack %s)", version.__version__)
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def init(self: Any) -> None:
        original(self)
        try:
            add_indexes(self)
        except sqlite3.Error:  # an index is a speed-up, never worth failing CloudWatch for
            LOG.warning("sfn-patterns metric index not created", exc_info=True)

    init._sfnp_patched = True
    CloudwatchDatabase.__init__ = init
    return True
