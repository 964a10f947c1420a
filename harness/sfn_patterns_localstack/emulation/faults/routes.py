"""``/_sfnp/faults``: load, clear and read the plan of a running LocalStack over HTTP.

A test or ``sfn-patterns localstack faults`` changes the faults of a LocalStack that
is already serving (the session's, shared by a test file's tests) without a restart:

* ``POST /_sfnp/faults`` with a plan document: load it (400 with the field's error);
* ``DELETE /_sfnp/faults``: unload it (the log is kept until the next plan);
* ``GET /_sfnp/faults``: the plan, when it was loaded, and the log of injected faults.

The route sits on LocalStack's edge router, which runs before AWS request parsing, so
it never reaches a service nor the injector's handlers.
"""

from __future__ import annotations

import json
from typing import Any

from sfn_patterns_localstack.emulation.faults import plan as plans
from sfn_patterns_localstack.emulation.faults.injector import INJECTOR, Injector

PATH = "/_sfnp/faults"


def _json(document: Any, status: int = 200) -> Any:
    from localstack.http import Response

    return Response(json.dumps(document, default=str), status, mimetype="application/json")


def endpoint(request: Any, injector: Injector = INJECTOR) -> Any:
    """Serve one request of the route."""
    if request.method == "GET":
        return _json(injector.describe())
    if request.method == "DELETE":
        injector.clear()
        return _json({"plan": None})
    try:
        document = json.loads(request.get_data() or b"null")
    except ValueError as error:
        return _json({"error": f"plan: not JSON ({error})"}, 400)
    try:
        plan = plans.parse(document)
    except plans.PlanError as error:
        return _json({"error": str(error)}, 400)
    injector.set_plan(plan)
    return _json({"plan": plan.document, "faults": len(plan.faults)})


def register() -> None:
    """Add the route to LocalStack's edge router (once)."""
    from localstack.services.edge import ROUTER

    if getattr(register, "done", False):
        return

    def serve(request: Any, **_: Any) -> Any:
        return endpoint(request)

    ROUTER.add(PATH, serve, methods=["GET", "POST", "DELETE"])
    register.done = True  # type: ignore[attr-defined]
