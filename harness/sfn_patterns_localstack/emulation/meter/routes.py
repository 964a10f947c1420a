"""``/_sfnp/meter``: switch the request meter on, read it, switch it off.

``POST`` resets the counters and counts from then on, ``GET`` reads them, ``DELETE``
switches the meter off (the counters stay readable), on a running LocalStack.

The route sits on LocalStack's edge router, before AWS request parsing: reading the
meter is never itself counted.
"""

from __future__ import annotations

import json
from typing import Any

from sfn_patterns_localstack.emulation.meter.meter import METER, Meter

PATH = "/_sfnp/meter"


def endpoint(request: Any, meter: Meter = METER) -> Any:
    """Serve one request of the route."""
    from localstack.http import Response

    if request.method == "POST":
        meter.start()
    elif request.method == "DELETE":
        meter.stop()
    return Response(json.dumps(meter.snapshot()), 200, mimetype="application/json")


def register() -> None:
    """Add the route to LocalStack's edge router and the handler to its chain (once)."""
    from localstack.aws import handlers
    from localstack.services.edge import ROUTER

    from sfn_patterns_localstack.emulation.meter import gateway

    if getattr(register, "done", False):
        return

    def serve(request: Any, **_: Any) -> Any:
        return endpoint(request)

    ROUTER.add(PATH, serve, methods=["GET", "POST", "DELETE"])
    handlers.run_custom_response_handlers.append(gateway.on_response)
    register.done = True  # type: ignore[attr-defined]
