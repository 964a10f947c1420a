"""moto's Query reads the items of the partition it names, not the whole table.

AWS's Query reads one partition key's items, in sort-key order, from the first one the
key condition allows: its cost follows what it reads, whatever else the table holds.
moto 5's ``Table.query`` starts from ``Table.all_items()``, which lists *every* item
of the table and sorts them all (by Python comparisons of ``DynamoType`` keys), then
keeps the partition's, and then computes each remaining item's size while testing its
sort key. So a Query's cost grew with the table: the dag-aggregate runs table, one
partition per run holding its tasks and ready items, took seconds per Query at 5,000
tasks (a GetItem waited 2.8 s behind them: the provider runs one request at a time),
and the benchmark's tasks per second halved from 1,000 to 5,000 tasks, while on AWS
the same Queries read a handful of items each.

Here, for the duration of one ``Table.query``, ``all_items()`` answers with the
candidates only:

* a base-table Query: the partition's items that satisfy the key condition (moto's
  own ``DynamoType.compare``, the test its loop would apply next) and the nearest item
  on either side of them, in no order; moto then sorts those few and walks them as
  before. A first page with a ``Limit`` on string or number sort keys keeps only the
  Limit + 1 items its walk reads;
* a Query of an index: the items whose index partition key matches, found by one
  pass over the table, in no order (moto sorts them on the index's keys and then the
  table's, a key no two items share). A first page with a ``Limit`` on string keys
  keeps only the items moto's walk reads.

Everything after that (exclusive start key, limit, the 1 MB page, projection,
filters, ``ScannedCount``) is moto's own code on the same items in the same order,
with one difference that is AWS's: items the key condition excludes no longer count
towards the 1 MB page. Still linear in the partition (one pass of key comparisons, no
sort, no item sizes), where AWS reads only what it returns. The DynamoDB provider
runs one request at a time (plugins.serialized), and the candidates are kept per
thread besides.
"""

from __future__ import annotations

import bisect
import functools
import inspect
import logging
import operator
import threading
from typing import Any

LOG = logging.getLogger(__name__)
_state = threading.local()
_PARAMETERS = (
    "hash_key",
    "range_comparison",
    "range_objs",
    "index_name",
    "limit",
    "exclusive_start_key",
    "scan_index_forward",
)


def candidates(
    table: Any,
    hash_key: Any,
    range_comparison: str | None,
    range_objs: list[Any],
    window: tuple[int, bool] | None = None,
) -> list[Any]:
    """A base-table Query's items: the partition's, filtered by the key condition.

    ``window``: (Limit, forward) of a first page (no ExclusiveStartKey): moto's loop
    reads at most Limit matching items and one more, so on string or number sort keys
    only those are kept (see :func:`_sorted_candidates`).
    """
    found = table.items.get(hash_key)
    if found is None:
        return []
    if not table.range_key_attr:
        return [found]
    # moto refuses an item whose sort key is not of the table's type.
    sort_value = _SORT_VALUES.get(table.range_key_type)
    if sort_value is not None and found:
        if not range_comparison and window is not None:
            return _sorted_candidates(found, sort_value, None, [], window)
        if (
            range_comparison in _BOUNDS
            and all(o.type == table.range_key_type for o in range_objs)
            and (table.range_key_type == "S" or range_comparison.upper() != "BEGINS_WITH")
        ):
            return _sorted_candidates(
                found, sort_value, range_comparison, [sort_value(o) for o in range_objs], window
            )
    return _compared_candidates(list(found.values()), range_comparison, range_objs)


def _compared_candidates(
    items: list[Any], range_comparison: str | None, range_objs: list[Any]
) -> list[Any]:
    """:func:`candidates` with moto's own comparisons (any key type, no window)."""
    if not range_comparison:
        return items
    matching = [item for item in items if item.range_key.compare(range_comparison, range_objs)]
    if not matching:
        return []
    # A key condition selects one run of sort keys. moto's loop also looks at the item
    # just past that run in the Query's direction (a full page then ends with a
    # LastEvaluatedKey, as on AWS), so the nearest item on either side stays too.
    low = min(item.range_key for item in matching)
    high = max(item.range_key for item in matching)
    below = [item for item in items if item.range_key < low]
    above = [item for item in items if high < item.range_key]
    if below:
        matching.append(max(below, key=lambda item: item.range_key))
    if above:
        matching.append(min(above, key=lambda item: item.range_key))
    return matching


def _begins_with(keys: list[str], operands: list[str]) -> tuple[int, int]:
    low = hi = bisect.bisect_left(keys, operands[0])
    while hi < len(keys) and keys[hi].startswith(operands[0]):
        hi += 1
    return low, hi


# The run of sorted keys each key condition selects, as [low, high) indexes: what
# moto's DynamoType.compare answers, which compares Python strings for type S and the
# ints or floats of its cast_value for type N (BEGINS_WITH: strings only).
_BOUNDS: dict[str, Any] = {
    "EQ": lambda k, a: (bisect.bisect_left(k, a[0]), bisect.bisect_right(k, a[0])),
    "LT": lambda k, a: (0, bisect.bisect_left(k, a[0])),
    "LE": lambda k, a: (0, bisect.bisect_right(k, a[0])),
    "GT": lambda k, a: (bisect.bisect_right(k, a[0]), len(k)),
    "GE": lambda k, a: (bisect.bisect_left(k, a[0]), len(k)),
    "BETWEEN": lambda k, a: (bisect.bisect_left(k, a[0]), bisect.bisect_right(k, a[1])),
    "BEGINS_WITH": _begins_with,
}
# moto's key-condition parser passes the operator as written ("=", "<", ...).
_BOUNDS.update({"=": _BOUNDS["EQ"], "<": _BOUNDS["LT"], "<=": _BOUNDS["LE"]})
_BOUNDS.update({">": _BOUNDS["GT"], ">=": _BOUNDS["GE"]})


# What moto's DynamoType comparisons compare, per sort-key type, as plain Python values
# that sort in C: a string's value, a number's ``cast_value`` (moto's own int, else
# float, which its ``__lt__`` compares).
_SORT_VALUES: dict[str, Any] = {
    "S": operator.attrgetter("value"),
    "N": operator.attrgetter("cast_value"),
}


def _sorted_candidates(
    partition: dict[Any, Any],
    sort_value: Any,
    comparison: str | None,
    operands: list[Any],
    window: tuple[int, bool] | None = None,
) -> list[Any]:
    """:func:`candidates` for string or number sort keys: one C-level sort, then bisection.

    The fast path, without a ``DynamoType`` method call per comparison (about 15 us
    each: 100 ms a Query in a 7,000-item partition). ``partition`` is moto's
    ``{sort key: item}``; ``sort_value`` turns a key into what moto's comparisons
    compare (:data:`_SORT_VALUES`), and ``operands`` are already such values. Returns
    the matching run of items and its two neighbours; with a ``window`` (Limit,
    forward), only the first Limit + 1 of the run in the Query's direction (the last
    one, or the neighbour, makes moto end the page with a LastEvaluatedKey, as AWS
    does); ``comparison`` None: no key condition on the sort key (the whole partition
    is the run). moto sorted every item of the run with Python comparisons: the
    dag-aggregate's Limit-2 Query of its ready items took 44 ms with 2,500 of them
    against 7 ms with 500 (a micro-benchmark), and the semaphore's Limit-1 Query of its
    oldest waiter, on a number sort key (the ticket), sorted every waiter at each
    hand-over: with 9,000 parked, 85 % of LocalStack's CPU (yappi, CPU clock).
    """
    keys = list(partition)
    values = [sort_value(key) for key in keys]
    # Stable, like moto's sort of the partition's items in their insertion order.
    order = sorted(range(len(keys)), key=values.__getitem__)
    ordered = [values[i] for i in order]
    low, high = (0, len(ordered)) if comparison is None else _BOUNDS[comparison](ordered, operands)
    if low >= high:
        return []
    first, last = max(low - 1, 0), high + 1
    if window is not None:
        limit, forward = window
        if forward:
            last = min(last, low + limit + 1)
        else:
            first = max(first, high - limit - 1)
    return [partition[keys[i]] for i in order[first:last]]


def index_candidates(
    table: Any,
    hash_key: Any,
    index_name: str,
    *,
    range_comparison: str | None = None,
    range_objs: tuple[Any, ...] | list[Any] = (),
    window: tuple[int, bool] | None = None,
) -> list[Any] | None:
    """An index Query's items, in no order; None: let moto decide (no such index).

    ``window`` as for :func:`candidates`: on string keys only the items moto's walk
    reads are kept (see :func:`_index_window`).
    """
    index = next((i for i in table.all_indexes() if i.name == index_name), None)
    if index is None:
        return None
    hash_attr = next((k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"), None)
    if hash_attr is None:
        return None
    matching = []
    for partition in table.items.values():
        for item in partition.values() if table.range_key_attr else (partition,):
            value = item.attrs.get(hash_attr)
            if value and value == hash_key:  # moto's own test, as its loop writes it
                matching.append(item)
    if window is not None:
        kept = _index_window(
            table,
            index,
            matching,
            hash_attr=hash_attr,
            range_comparison=range_comparison,
            range_objs=range_objs,
            window=window,
        )
        if kept is not None:
            return kept
    return matching


def _string_sorted(items: list[Any], key: Any) -> list[Any] | None:
    """``items`` sorted by ``key`` (a tuple of DynamoTypes) if every part is a string.

    Sorted on the strings in C, which orders exactly as ``DynamoType``'s comparisons do
    for type S; None (sort with moto's comparisons) if any part is not a string.
    """
    native = []
    for item in items:
        parts = key(item)
        if any(part.type != "S" for part in parts):
            return None
        native.append(tuple(part.value for part in parts))
    order = sorted(range(len(items)), key=native.__getitem__)
    return [items[i] for i in order]


def _index_window(
    table: Any,
    index: Any,
    matching: list[Any],
    *,
    hash_attr: str,
    range_comparison: str | None,
    range_objs: tuple[Any, ...] | list[Any],
    window: tuple[int, bool],
) -> list[Any] | None:
    """The items a first index page with a Limit reads; None: all of them.

    moto keeps the items that have the index's sort key, sorts them by the index's and
    the table's keys, walks them in the Query's direction, and stops at the first item
    after Limit matching ones. Those items, in the same order, are all it needs: the
    status-table's claimable pages (Limit 13 per shard) sorted a whole shard of the
    status index with Python comparisons. Only for an index with a sort key and string
    keys throughout; None otherwise (moto's own walk over every item).
    """
    range_attr = next((k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"), None)
    if range_attr is None:
        return None
    attrs = table._generate_attr_to_sort_by(
        [hash_attr, table.hash_key_attr], [range_attr, table.range_key_attr]
    )
    present = [item for item in matching if item.attrs.get(range_attr)]
    ordered = _string_sorted(present, lambda x: tuple(x.attrs[a] for a in attrs))
    if ordered is None:
        return None
    limit, forward = window
    walk = ordered if forward else ordered[::-1]
    kept: list[Any] = []
    counted = 0
    for item in walk:
        kept.append(item)
        if counted == limit:
            break  # the item at which moto ends the page with a LastEvaluatedKey
        if range_comparison is None or item.attrs[range_attr].compare(range_comparison, range_objs):
            counted += 1
    return kept  # moto sorts them again on its (unique) key, and reverses a backward walk


def apply() -> bool:
    """Patch moto's ``Table.query`` once; False (and nothing changed) if its code changed."""
    try:
        from moto.dynamodb.models.table import Table
    except ImportError:
        return False
    original = Table.query
    if getattr(original, "_sfnp_patched", False):
        return True
    signature = inspect.signature(original)
    source = inspect.getsource(original)
    if (
        not set(_PARAMETERS) <= set(signature.parameters)
        or source.count("self.all_items()") != 2
        or "def all_items" not in inspect.getsource(Table)
        or not hasattr(Table, "_generate_attr_to_sort_by")
    ):
        LOG.warning("sfn-patterns moto Query patch not applied: moto's code changed")
        return False
    all_items = Table.all_items

    @functools.wraps(all_items)
    def all_items_of_query(self: Any) -> list[Any]:
        chosen = getattr(_state, "candidates", None)
        if chosen is not None and chosen[0] is self:
            return chosen[1]
        return all_items(self)

    @functools.wraps(original)
    def query(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        first_page = (
            given["limit"]
            and given["exclusive_start_key"] is None
            and not given.get("filter_kwargs")  # moto's legacy filters change its walk
        )
        window = (given["limit"], given["scan_index_forward"] is not False) if first_page else None
        if given["index_name"]:
            chosen = index_candidates(
                self,
                given["hash_key"],
                given["index_name"],
                range_comparison=given["range_comparison"],
                range_objs=given["range_objs"],
                window=window,
            )
        else:
            chosen = candidates(
                self,
                given["hash_key"],
                given["range_comparison"],
                given["range_objs"],
                window,
            )
        if chosen is None:
            return original(self, *args, **kwargs)
        _state.candidates = (self, chosen)
        try:
            return original(self, *args, **kwargs)
        finally:
            _state.candidates = None

    query._sfnp_patched = True  # type: ignore[attr-defined]
    Table.all_items = all_items_of_query
    Table.query = query
    return True
