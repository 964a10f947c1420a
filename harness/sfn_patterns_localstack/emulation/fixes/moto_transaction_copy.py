"""moto's TransactWriteItems undoes what it wrote, instead of copying whole tables.

Before every TransactWriteItems, moto 5 ``copy.deepcopy``-s each table the transaction
names, every item of it, once per transaction item naming it, to put back if the
transaction is cancelled. The semaphore's acquire and release are transactions on a
table holding every holder and the counter, so each one copied the table: 1.6 of the
33 CPU-seconds LocalStack spent on tests/semaphore/test_callback.py
(emulation/profiler.py), growing with the table.

A first fix copied the table's item containers (not the items): still a pass over
every item of every table named, once per transaction item. In a micro-benchmark
beside a test run, a three-item transaction in a 7,500-item partition (5,000
dag-aggregate tasks) took 46 ms against 9 ms at 1,000 tasks.

Here moto's table copy is the table itself (no copy, so moto's own "put back" changes
nothing) and the transaction keeps an undo log instead: before moto runs, the item
each Put, Delete or Update names, as it is (a Put or a Delete replaces or removes the
stored item, never changes it; an Update changes it in place, so its item is deep
copied), or its absence. If moto raises (a cancellation, or a validation error after
earlier writes), the log is replayed: each key gets its item back, or loses
the one the transaction created, and a partition the transaction created is removed.
The cost follows the transaction's items, not the tables. A table with a stream keeps
moto's full copy (its stream records are part of the image). The DynamoDB provider
runs one operation at a time (plugins.serialized), so no other request sees or
changes a table between the log and the replay.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import threading
from typing import Any

LOG = logging.getLogger(__name__)
MARKER = "original_table_state[table_name] = copy.deepcopy("
_state = threading.local()
ABSENT = object()


class UndoLog:
    """What a transaction's writes replaced, to put back if moto cancels it."""

    def __init__(self, backend: Any, transact_items: list[dict[str, Any]]) -> None:
        self.entries: list[tuple[Any, Any, Any, Any, bool]] = []
        for entry in transact_items:
            op_type, op = next(iter(entry.items()))
            if op_type not in ("Put", "Delete", "Update"):
                continue  # a ConditionCheck writes nothing
            table = backend.tables.get(op.get("TableName"))
            if table is None or table.stream_shard is not None:
                continue  # moto fails it before writing, or keeps its own full copy
            key = self._key(backend, table, op_type, op)
            if key is not None:
                self.entries.append((table, *key, *self._saved(table, *key, op_type)))

    @staticmethod
    def _key(backend: Any, table: Any, op_type: str, op: dict[str, Any]) -> Any:
        """(hash key, range key) as moto stores them; None: moto fails the item itself."""
        try:
            if op_type == "Put":
                attrs = op["Item"]
                key = {table.hash_key_attr: attrs[table.hash_key_attr]}
                if table.range_key_attr is not None:
                    key[table.range_key_attr] = attrs[table.range_key_attr]
            else:
                key = op["Key"]
            return backend.get_keys_value(table, key)
        except Exception:  # moto raises for this item before it writes it
            return None

    @staticmethod
    def _saved(table: Any, hash_key: Any, range_key: Any, op_type: str) -> tuple[Any, bool]:
        """The stored item (a deep copy for an Update) or ABSENT; whether its partition was."""
        if table.range_key_attr is None:
            item = table.items.get(hash_key, ABSENT)
            had_partition = True
        else:
            partition = table.items.get(hash_key)
            had_partition = partition is not None
            item = ABSENT if partition is None else partition.get(range_key, ABSENT)
        if op_type == "Update" and item is not ABSENT:
            item = copy.deepcopy(item)
        return item, had_partition

    def undo(self) -> None:
        """Put every logged key back as it was (each entry holds the state before moto ran)."""
        for table, hash_key, range_key, item, had_partition in self.entries:
            if table.range_key_attr is None:
                if item is ABSENT:
                    table.items.pop(hash_key, None)
                else:
                    table.items[hash_key] = item
                continue
            partition = table.items.get(hash_key)
            if item is not ABSENT:
                if partition is None:
                    partition = table.items[hash_key] = {}
                partition[range_key] = item
            elif partition is not None:
                partition.pop(range_key, None)
                if not partition and not had_partition:
                    del table.items[hash_key]


def apply() -> bool:
    """Patch moto's DynamoDB once; False (and nothing changed) if its code changed.

    Needs moto_update_copy's ``copy`` stand-in in moto's models module (applied first
    by plugins.py; applied here if it was not).
    """
    try:
        from moto.dynamodb import models
        from moto.dynamodb.models.table import Table

        from sfn_patterns_localstack.emulation.fixes import moto_update_copy
    except ImportError:
        return False
    backend = models.DynamoDBBackend
    original = backend.transact_write_items
    if getattr(original, "_sfnp_patched", False):
        return True
    source = inspect.getsource(original)
    if (
        source.count(MARKER) != 1
        or source.count("self.tables[table_name] = original_table_state[table_name]") != 2
        or not moto_update_copy.apply()
    ):
        LOG.warning("sfn-patterns moto TransactWriteItems patch not applied: moto's code changed")
        return False
    stand_in = models.copy

    def deepcopy(value: Any, memo: Any = None) -> Any:
        if (
            getattr(_state, "logged", False)
            and isinstance(value, Table)
            and value.stream_shard is None
        ):
            return value  # the undo log restores it; moto's put-back is then a no-op
        return stand_in_deepcopy(value, memo)

    stand_in_deepcopy = stand_in.deepcopy
    stand_in.deepcopy = deepcopy

    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        log = UndoLog(self, transact_items)
        _state.logged = True
        try:
            return original(self, transact_items)
        except BaseException:
            log.undo()
            raise
        finally:
            _state.logged = False

    transact_write_items._sfnp_patched = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items
    return True
