"""Put the fault injector into a starting LocalStack (called from :mod:`..plugins`).

LocalStack imports the plugins module before it serves a request: the handlers join
its chain's extension points (``serve_custom_service_request_handlers``, after the
request is parsed; ``run_custom_response_handlers``, after the answer is parsed), the
route joins its edge router, and ``SFNP_FAULTS`` names a plan to load at start.
"""

from __future__ import annotations

import logging
import os
import sys

from sfn_patterns_localstack.emulation.faults import deliveries, gateway, routes, transitions
from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults.injector import INJECTOR

LOG = logging.getLogger(__name__)
_installed: list[bool] = []  # non-empty once installed


def install() -> None:
    """Install the handlers, the route and the delivery patches once; load ``SFNP_FAULTS``.

    A plan file that cannot be read or parsed ends LocalStack with exit status 3 and
    the error on stderr: a run that asked for faults must not go on without them.
    """
    if _installed:
        return
    from localstack.aws import handlers

    handlers.serve_custom_service_request_handlers.append(gateway.on_request)
    handlers.run_custom_response_handlers.append(gateway.on_response)
    routes.register()
    deliveries.apply()
    transitions.apply()
    _installed.append(True)
    path = os.environ.get("SFNP_FAULTS")
    if path:
        try:
            INJECTOR.set_plan(plans.load(path))
        except (OSError, plans.PlanError) as error:
            # LocalStack imports plugins on a thread and only logs what they raise, so
            # the process would serve on without the faults: end it, saying why.
            message = f"SFNP_FAULTS: {error}"
            LOG.error(message)
            print(message, file=sys.stderr, flush=True)
            os._exit(3)
        LOG.info("fault plan %s loaded", path)
