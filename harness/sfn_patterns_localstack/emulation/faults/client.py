"""Set, clear and read a running LocalStack's fault plan (tests and the CLI use this).

Plain HTTP on ``/_sfnp/faults`` (:mod:`.routes`), so the caller needs neither
LocalStack nor boto3 in its process.
"""

from __future__ import annotations

import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.emulation.faults.plan import PlanError

PATH = "/_sfnp/faults"


class FaultRouteError(RuntimeError):
    """The LocalStack does not serve the fault route (not this harness, or not reachable)."""


def _request(endpoint: str, method: str, body: Any = None, timeout: float = 10.0) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        endpoint.rstrip("/") + PATH,
        data=data,
        method=method,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")
        if error.code == 400:
            try:
                message = json.loads(text)["error"]
            except (ValueError, KeyError, TypeError):
                message = None
            if message:
                raise PlanError(message) from None
        raise FaultRouteError(
            f"{method} {endpoint}{PATH} answered {error.code}: {text[:300]}"
            " (is this LocalStack started with the sfn-patterns harness?)"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        raise FaultRouteError(f"{endpoint} is not reachable: {error}") from None


def set_plan(endpoint: str, plan: dict[str, Any] | str | Path) -> dict[str, Any]:
    """Load ``plan`` (a document, or the path of a JSON file); PlanError names a bad field."""
    if isinstance(plan, str | Path):
        try:
            plan = json.loads(Path(plan).read_text())
        except ValueError as error:
            raise PlanError(f"{plan}: not JSON ({error})") from error
    return _request(endpoint, "POST", plan)


@contextlib.contextmanager
def applied(endpoint: str, plan: dict[str, Any] | str | Path) -> Iterator[dict[str, Any]]:
    """Load ``plan`` for the ``with`` block and clear it however the block ends.

    A plan left loaded by a failed test would throttle every later test on that
    LocalStack, which then fails for a reason of someone else's.
    """
    loaded = set_plan(endpoint, plan)
    try:
        yield loaded
    finally:
        clear(endpoint)


def clear(endpoint: str) -> None:
    """Unload the plan; calls run fault-free from now on (the log is kept)."""
    _request(endpoint, "DELETE")


def state(endpoint: str) -> dict[str, Any]:
    """The loaded plan (or None), when it was loaded, and the log."""
    return _request(endpoint, "GET")


def log(endpoint: str) -> list[dict[str, Any]]:
    """Every fault injected since the current (or last) plan was loaded, oldest first."""
    return state(endpoint)["log"]
