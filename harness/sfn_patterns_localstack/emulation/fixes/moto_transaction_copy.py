"""moto's TransactWriteItems keeps a rollback image of what it changes, not of whole tables.

Before every TransactWriteItems, moto 5 ``copy.deepcopy``-s each table the transaction
names, every item of it, to put back if the transaction is cancelled. The semaphore's
acquire and release are transactions on a table holding every holder and the
counter, so each one copied the table: 1.6 of the 33 CPU-seconds LocalStack spent on
tests/semaphore/test_callback.py (emulation/profiler.py), growing with the table.

The rollback image here is the table object copied shallowly, with its item
containers copied (a Put or a Delete replaces or removes an entry, never changes the
stored item) and a deep copy of each item an Update names (moto updates an item in
place). Put back on a cancellation, it holds exactly what the full copy held: the
items the transaction did not touch are the same objects, unchanged. A table with a
stream keeps moto's full copy (its stream records are part of the image). The DynamoDB
provider runs one operation at a time (plugins.serialized), so no other request sees
or changes a table between the image and the put-back.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import threading
from collections import defaultdict
from typing import Any

LOG = logging.getLogger(__name__)
MARKER = "original_table_state[table_name] = copy.deepcopy("
_state = threading.local()


def image(backend: Any, table: Any, transact_items: list[dict[str, Any]]) -> Any:
    """The rollback image of ``table`` for these transaction items (see the module doc)."""
    clone = copy.copy(table)
    if table.has_range_key:
        items: Any = defaultdict(dict, {h: dict(r) for h, r in table.items.items()})
    else:
        items = defaultdict(dict, table.items)
    for entry in transact_items:
        op_type, op = next(iter(entry.items()))
        if op_type != "Update" or op.get("TableName") != table.name:
            continue
        try:
            hash_key, range_key = backend.get_keys_value(table, op["Key"])
        except Exception:
            continue
        if table.has_range_key:
            if range_key in items.get(hash_key, {}):
                items[hash_key][range_key] = copy.deepcopy(items[hash_key][range_key])
        elif hash_key in items:
            items[hash_key] = copy.deepcopy(items[hash_key])
    clone.items = items
    return clone


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
        context = getattr(_state, "transaction", None)
        if context is not None and isinstance(value, Table) and value.stream_shard is None:
            return image(context[0], value, context[1])
        return stand_in_deepcopy(value, memo)

    stand_in_deepcopy = stand_in.deepcopy
    stand_in.deepcopy = deepcopy

    @functools.wraps(original)
    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        _state.transaction = (self, transact_items)
        try:
            return original(self, transact_items)
        finally:
            _state.transaction = None

    transact_write_items._sfnp_patched = True  # type: ignore[attr-defined]
    backend.transact_write_items = transact_write_items
    return True
