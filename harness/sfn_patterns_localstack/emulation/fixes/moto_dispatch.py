"""moto finds a request's handler method without listing its class's members each time.

Profiled with ``py-spy --gil`` on LocalStack answering DynamoDB GetItems, 7.7 % of the
emulator's time went to ``inspect.getmembers`` under ``BaseResponse.call_action``: moto
4.x/5.x asks ``method_names_from_class(self.__class__)`` on every request only to check
that the action's snake-case name is one of the response class's functions. A class's
functions do not change while LocalStack runs, so the answer is kept per class (a
frozenset: the one caller only tests membership). Every other step of the dispatch,
the call of the method included, is moto's.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

LOG = logging.getLogger(__name__)


def apply() -> bool:
    """Patch moto's response dispatch once; False (and nothing changed) if it moved."""
    try:
        from moto.core import responses
    except ImportError:
        return False
    original = getattr(responses, "method_names_from_class", None)
    if original is None:
        LOG.warning("sfn-patterns moto dispatch patch not applied: no method_names_from_class")
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.cache
    def method_names_from_class(clazz: Any) -> frozenset[str]:
        return frozenset(original(clazz))

    method_names_from_class._sfnp_patched = True  # type: ignore[attr-defined]
    responses.method_names_from_class = method_names_from_class
    return True
