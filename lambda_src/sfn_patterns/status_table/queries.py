"""Server-side queries over the status GSI: never a Scan.

Each status of a use case is split over ``n_shards`` GSI partitions, so a query
issues one Query per shard with ``update_time`` as the key condition and merges the
sorted streams lazily (``heapq.merge``); a ``limit`` stops paging early, and sizes
the pages: each of a status's shards asks for its share of the limit, and the merge
fetches a shard's next page only if it needs more from it. Without page sizes each
shard's first page was up to 1 MB, so what a worker's ``claimable(limit=50)`` read
grew with the table (scripts/bench_scale.py: 4 items a page at 100 tasks, 42 at
1,000).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sfn_patterns.status_table.model import TaskRecord, status_key_for_shard, to_record
from sfn_patterns.status_table.statuses import Status, parse_status


def _range_condition(model: type[Any], since: datetime | None, until: datetime | None) -> Any:
    attr = model.update_time
    if since is not None and until is not None:
        return attr.between(since, until)
    if since is not None:
        return attr >= since
    if until is not None:
        return attr <= until
    return None


def iter_tasks(
    model: type[Any],
    use_case_id: str,
    status: Status | str,
    n_shards: int,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    newest_first: bool = False,
    filter_condition: Any = None,
    limit: int | None = None,
) -> Iterator[Any]:
    """Model items of one status in update_time order, merged over all shards.

    ``limit``: how many the caller will take at most; each shard's pages then hold
    its share of it (at least one item), so what is read stays near what is used.
    """
    if (since is not None and since.tzinfo is None) or (until is not None and until.tzinfo is None):
        raise ValueError("since/until must be timezone-aware datetimes")
    status = parse_status(status)
    condition = _range_condition(model, since, until)
    streams = [
        model.status_index.query(
            status_key_for_shard(use_case_id, status, shard),
            range_key_condition=condition,
            filter_condition=filter_condition,
            scan_index_forward=not newest_first,
            page_size=None if limit is None else max(1, -(-limit // n_shards)),
        )
        for shard in range(n_shards)
    ]
    return heapq.merge(*streams, key=lambda item: item.update_time, reverse=newest_first)


def query_tasks(
    model: type[Any],
    use_case_id: str,
    status: Status | str,
    n_shards: int,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    newest_first: bool = False,
) -> list[TaskRecord]:
    """Tasks of one status, optionally within [since, until], oldest first by default."""
    items = iter_tasks(
        model,
        use_case_id,
        status,
        n_shards,
        since=since,
        until=until,
        newest_first=newest_first,
        limit=limit,
    )
    return [to_record(item) for item in itertools.islice(items, limit)]


def claimable_tasks(
    model: type[Any],
    use_case_id: str,
    n_shards: int,
    now: datetime,
    *,
    limit: int | None = None,
) -> list[TaskRecord]:
    """Pending, failed, and in_progress-with-expired-lease tasks, oldest update first.

    The expired-lease filter runs server-side (a FilterExpression on the Query), so
    live leases are not shipped to the worker at all.
    """
    streams = [
        iter_tasks(model, use_case_id, Status.PENDING, n_shards, limit=limit),
        iter_tasks(model, use_case_id, Status.FAILED, n_shards, limit=limit),
        iter_tasks(
            model,
            use_case_id,
            Status.IN_PROGRESS,
            n_shards,
            filter_condition=model.lease_expires_at <= now,
            limit=limit,
        ),
    ]
    merged = heapq.merge(*streams, key=lambda item: item.update_time)
    return [to_record(item) for item in itertools.islice(merged, limit)]
