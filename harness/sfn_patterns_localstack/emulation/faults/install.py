"""Put the fault injector into a starting LocalStack (called from :mod:`..plugins`).

LocalStack imports the plugins module before it serves a request: the handlers join
its chain's extension points (``serve_custom_service_request_handlers``, after the
request is parsed; ``run_custom_response_handlers``, after the answer is parsed), the
route joins its edge router, and ``SFNP_FAULTS`` names a plan to load at start.
"""

from __future__ import annotations

import logging
import os

from sfn_patterns_localstack.emulation.faults import deliveries, gateway, routes
from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults.injector import INJECTOR

LOG = logging.getLogger(__name__)
_installed: list[bool] = []  # non-empty once installed


def install() -> None:
    """Install the handlers, the route and the delivery patches once; load ``SFNP_FAULTS``.

    A plan file that does not parse raises: a run that asked for faults must not go
    on without them.
    """
    if _installed:
        return
    from localstack.aws import handlers

    handlers.serve_custom_service_request_handlers.append(gateway.on_request)
    handlers.run_custom_response_handlers.append(gateway.on_response)
    routes.register()
    deliveries.apply()
    _installed.append(True)
    path = os.environ.get("SFNP_FAULTS")
    if path:
        INJECTOR.set_plan(plans.load(path))
        LOG.info("fault plan %s loaded", path)
