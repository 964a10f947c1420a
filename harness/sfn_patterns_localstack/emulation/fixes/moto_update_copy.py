"""moto's UpdateItem stops deep-copying the whole item when nothing reads the copy.

Profiled on the 500-task dag-aggregate run (py-spy, LocalStack's process holding the
GIL), a fifth of the emulator's time was ``copy.deepcopy`` in moto's
``DynamoDBBackend.update_item``: it copies the item before every update, only to hand
the old image to the table's stream. The dependency strategy's run item holds maps
of every ready and running task and is updated on every task report, so each copy
grew with the DAG.

The copy is skipped only for a table without a stream, where ``orig_item`` is never
read; tables with streams keep moto's behaviour. Every other ``copy.deepcopy`` of the
module (the rollback image of TransactWriteItems) is untouched. The DynamoDB provider
runs one operation at a time (providers.serialized), so the per-thread switch cannot
leak into another request.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import threading
import types
from typing import Any

LOG = logging.getLogger(__name__)
MARKER = "orig_item = copy.deepcopy(item)"
_state = threading.local()


class _CopyModule(types.ModuleType):
    """``copy`` as moto's DynamoDB models see it: deepcopy may pass an Item through."""

    def __init__(self, item_type: type) -> None:
        super().__init__("copy")
        self._item_type = item_type

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        if getattr(_state, "skip_item_copy", False) and isinstance(value, self._item_type):
            return value
        return copy.deepcopy(value, memo)


def apply() -> bool:
    """Patch moto's DynamoDB once; return False (and change nothing) if its code changed."""
    try:
        from moto.dynamodb import models
    except ImportError:
        return False
    backend = models.DynamoDBBackend
    original = backend.update_item
    if getattr(original, "_sfnp_patched", False):
        return True
    source = inspect.getsource(original)
    if (
        source.count(MARKER) != 1
        or source.count("orig_item") != 2
        or "table.stream_shard.add(orig_item, item)" not in source
        or models.copy is not copy
    ):
        LOG.warning("sfn-patterns moto UpdateItem patch not applied: moto's code changed")
        return False

    @functools.wraps(original)
    def update_item(self: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
        _state.skip_item_copy = self.get_table(table_name).stream_shard is None
        try:
            return original(self, table_name, *args, **kwargs)
        finally:
            _state.skip_item_copy = False

    update_item._sfnp_patched = True  # type: ignore[attr-defined]
    models.copy = _CopyModule(models.Item)
    backend.update_item = update_item
    return True
