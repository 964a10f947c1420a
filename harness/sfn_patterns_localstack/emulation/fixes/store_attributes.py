"""A store's shared attribute is made once, whichever thread asks first (LocalStack 4.14.0).

AWS never drops a write it acknowledged: a TagResource or a tagged PutMetricAlarm that
answered 200 is in every later ListTagsForResource.

LocalStack 4.14.0 keeps what a service shares across regions or accounts (CloudWatch's
tags, for one: ``TAGS = CrossRegionAttribute(default=TaggingService)``) in descriptors
that make the value on first access with a check, then a set
(``localstack/services/stores.py``: ``if self.name not in obj._global: obj._global[...]
= self.default()``). Two request threads that reach a fresh store at once each make
one, and the later replaces the earlier, with whatever the first thread wrote into it.
Terraform creates a module's alarms in parallel, so on a LocalStack whose first
CloudWatch requests were those creates, some alarms read back untagged and a second
``terraform plan`` wanted to add their tags again (seen in a test run whose file order
made an alarm-creating apply the worker's first use of CloudWatch).

The patch makes both descriptors' first access atomic: the default is made once per
store, under a lock; every later access is the plain dict lookup it was.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

_LOCK = threading.Lock()


def _first_access(container: dict[str, Any], name: str, default: Any) -> Any:
    """``container[name]``, made from ``default`` by exactly one thread if absent."""
    try:
        return container[name]
    except KeyError:
        pass
    with _LOCK:
        if name not in container:
            container[name] = default() if callable(default) else default
        return container[name]


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services import stores
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION:
        LOG.warning(
            "sfn-patterns store attribute patch not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(stores.CrossRegionAttribute.__get__, "_sfnp_patched", False):
        return True

    def cross_region_get(self: Any, obj: Any, objtype: Any = None) -> Any:
        self._check_region_store_association(obj)
        return _first_access(obj._global, self.name, self.default)

    def cross_account_get(self: Any, obj: Any, objtype: Any = None) -> Any:
        self._check_account_store_association(obj)
        return _first_access(obj._universal, self.name, self.default)

    for descriptor, patched in (
        (stores.CrossRegionAttribute, cross_region_get),
        (stores.CrossAccountAttribute, cross_account_get),
    ):
        patched._sfnp_patched = True  # type: ignore[attr-defined]
        patched._sfnp_original = descriptor.__get__  # type: ignore[attr-defined]
        descriptor.__get__ = patched  # type: ignore[method-assign]
    return True
