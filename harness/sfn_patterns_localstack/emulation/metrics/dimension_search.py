"""A metric query matches a dimension's value exactly, not as a prefix (LocalStack 4.14.0).

CloudWatch's metric store keeps a metric's dimensions as one string,
``Name=Value<TAB>Name=Value<TAB>``, and GetMetricData (so every alarm evaluation)
finds them with ``LIKE '%Name=Value%'``. That also matches ``Name=Value-more``: an
alarm on function ``orders`` counted the errors of ``orders-starter``, and an alarm
on state machine ``...:stateMachine:jobs`` the failures of ``...:jobs-wrapper``.
The patch ends each searched pair with the tab the store writes after every value
(a ListMetrics filter without a value still matches any value).
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.cloudwatch.cloudwatch_database_helper import CloudwatchDatabase
    except ImportError:
        return False
    original = getattr(CloudwatchDatabase, "_get_ordered_dimensions_with_separator", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning(
            "sfn-patterns dimension search not applied (localstack %s)", version.__version__
        )
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def ordered(self: Any, dims: list[dict] | None, for_search: bool = False) -> str | None:
        if not for_search or not dims:
            return original(self, dims, for_search)
        dims.sort(key=lambda d: d["Name"])
        # A filter without a value (ListMetrics) still matches any value.
        return "".join(
            f"%{d.get('Name')}={d['Value']}\t%" if d.get("Value") else f"%{d.get('Name')}=%"
            for d in dims
        )

    ordered._sfnp_patched = True
    CloudwatchDatabase._get_ordered_dimensions_with_separator = ordered
    return True
