"""DeleteFunction deletes a function whose version failed to become Active (LocalStack 4.14.0).

AWS deletes a function in any state, ``Failed`` included (a function whose runtime or
code could not be set up): ``DeleteFunction`` answers 204 and ``GetFunction`` then
answers ``ResourceNotFoundException``. Terraform relies on it to replace or destroy such
a function.

LocalStack 4.14.0's ``delete_function`` stops each version through
``LambdaService.stop_version`` *before* it removes the function from its store, and
``stop_version`` raises ``ValueError("Unable to find version manager ...")`` for a
version that never started (its manager was dropped when it failed). So every
DeleteFunction of a Failed function answers ``InternalError`` and the function stays
forever. (4.9.2 popped the function first, so it was gone despite the error.)

The patch makes ``stop_version`` treat a version without a manager as already stopped:
its event manager is still stopped and the ``delete_function_version`` hook still runs,
as for a running version; any other error is raised as before.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
NO_MANAGER = "Unable to find version manager"


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.services.lambda_ import hooks as lambda_hooks
        from localstack.services.lambda_.invocation.lambda_service import LambdaService
    except ImportError:
        return False
    original = getattr(LambdaService, "stop_version", None)
    if version.__version__ != LOCALSTACK_VERSION or original is None:
        LOG.warning(
            "sfn-patterns delete-failed-function patch not applied (localstack %s)",
            version.__version__,
        )
        return False
    if getattr(original, "_sfnp_patched", False):
        return True

    @functools.wraps(original)
    def stop_version(self: Any, qualified_arn: str) -> None:
        try:
            original(self, qualified_arn)
        except ValueError as error:
            if not str(error).startswith(NO_MANAGER):
                raise
            # What the original does after the manager's stop: nothing is left to stop.
            lambda_hooks.delete_function_version.run(qualified_arn)

    stop_version._sfnp_patched = True  # type: ignore[attr-defined]
    LambdaService.stop_version = stop_version
    return True
