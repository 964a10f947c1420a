"""LocalStack's entry point here: skip two imports its start pays for and never uses.

``server.start`` runs ``python -m sfn_patterns_localstack.emulation.startup`` instead of
``python -m localstack.runtime.main``: this module applies :func:`lean_imports`, starts
the sampling profiler when ``SFNP_PROFILE`` is set (:mod:`.profiler`) and, when
``SFNP_PARENT_PID`` is set, a watch that ends this LocalStack once that process is gone
(:func:`watch_parent`), then runs LocalStack's own main module unchanged.

Why: a LocalStack start cost 5.3 CPU-seconds before serving its first request
(measured on 4.9.2), and every pytest-xdist worker, and a few files and benchmarks,
start one. Two imports in it do nothing for this project (measured in a fresh
interpreter with LocalStack's gateway and moto's DynamoDB/IAM/SQS already imported);
LocalStack 4.14.0 still makes both, from the same places as 4.9.2:

* ``localstack.aws.handlers.validation`` (imported by ``localstack.aws.handlers``, which
  makes its two handlers at import) imports ``openapi_core`` (0.9 CPU-second with its
  jsonschema and pydantic-settings dependencies) for two handlers that return at once
  unless ``OPENAPI_VALIDATE_REQUEST``/``OPENAPI_VALIDATE_RESPONSE`` is set (LocalStack's
  own test flags). The module is replaced by :class:`_DeferredValidator` handlers that
  check the same flag on each call and load the real handler the first time it is set.
* Step Functions' Batch task (``state_task_service_batch``) imports ``moto.batch.utils``
  for its ``JobStatus`` enum; importing it runs ``moto.batch``'s package, which imports
  moto's Batch, EC2, ECS and CloudWatch models (1.5 CPU-seconds). ``moto.batch.utils``
  and the ``moto.batch.exceptions`` it needs are loaded from their own files instead,
  under their own names, so the enum is the same class; a later ``import moto.batch``
  (nothing here serves Batch) still runs the package and finds them.

Neither changes what a request gets: AWS has no start-up to emulate.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import runpy
import signal
import sys
import threading
import time
import types
from typing import Any

_VALIDATION = "localstack.aws.handlers.validation"


def _load_file_module(name: str) -> types.ModuleType:
    """Import module ``name`` from its file without importing its package's ``__init__``."""
    grandparent, _, package = name.rpartition(".")[0].rpartition(".")
    locations = importlib.util.find_spec(grandparent).submodule_search_locations
    spec = importlib.machinery.PathFinder.find_spec(
        name, [os.path.join(location, package) for location in locations]
    )
    if spec is None:
        raise ImportError(name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _real_validation() -> types.ModuleType:
    """LocalStack's own validation module, loaded apart (the stand-in keeps its name)."""
    from localstack.aws import handlers

    spec = importlib.machinery.PathFinder.find_spec(_VALIDATION, list(handlers.__path__))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _DeferredValidator:
    """One of LocalStack's OpenAPI validation handlers, imported on first real use.

    ``flag`` is the config attribute the real handler checks first; while it is false
    the real handler returns without doing anything, and so does this one.
    """

    real_name = ""
    flag = ""

    def __init__(self) -> None:
        self._real: Any = None

    def __call__(self, chain: Any, context: Any, response: Any) -> None:
        from localstack import config

        if not getattr(config, self.flag):
            return None
        if self._real is None:
            self._real = getattr(_real_validation(), self.real_name)()
        return self._real(chain, context, response)


class OpenAPIRequestValidator(_DeferredValidator):
    """Stand-in for LocalStack's request validator (``OPENAPI_VALIDATE_REQUEST``)."""

    real_name = "OpenAPIRequestValidator"
    flag = "OPENAPI_VALIDATE_REQUEST"


class OpenAPIResponseValidator(_DeferredValidator):
    """Stand-in for LocalStack's response validator (``OPENAPI_VALIDATE_RESPONSE``)."""

    real_name = "OpenAPIResponseValidator"
    flag = "OPENAPI_VALIDATE_RESPONSE"


def lean_imports() -> list[str]:
    """Install both shortcuts (before LocalStack imports anything); the names installed."""
    installed = []
    if _VALIDATION not in sys.modules:
        stand_in = types.ModuleType(_VALIDATION, __doc__)
        stand_in.OpenAPIRequestValidator = OpenAPIRequestValidator
        stand_in.OpenAPIResponseValidator = OpenAPIResponseValidator
        stand_in.OpenAPIValidator = _DeferredValidator
        sys.modules[_VALIDATION] = stand_in
        installed.append(_VALIDATION)
    if "moto.batch.utils" not in sys.modules and "moto.batch" not in sys.modules:
        _load_file_module("moto.batch.exceptions")
        _load_file_module("moto.batch.utils")
        installed.append("moto.batch.utils")
    return installed


def watch_parent(check_every: float = 0.5) -> bool:
    """End this LocalStack, and its process group, once the process that started it is gone.

    A test session or benchmark killed without stopping its LocalStack (SIGTERM,
    SIGKILL, a crash) left it running, its Lambda workers still executing what was in
    flight: a benchmark stopped with ``pkill`` left one using CPU for 40 minutes, which
    slowed the next benchmark's run. ``server.start`` names the parent in
    ``SFNP_PARENT_PID``; a daemon start (``sfn-patterns localstack start``) does not,
    since it must outlive its command. True when a watch was started.
    """
    from sfn_patterns_localstack.server import PARENT_ENV

    parent = os.environ.get(PARENT_ENV)
    if not parent:
        return False
    expected = int(parent)

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(check_every)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    threading.Thread(target=watch, name="sfnp-parent-watch", daemon=True).start()
    return True


def main() -> None:
    """Run LocalStack (``localstack.runtime.main``) with the shortcuts and, if asked, sampled.

    A stock LocalStack (``server.start(stock=True)``) gets none of them: only the watch
    that ends it with its parent, which changes nothing a request sees.
    """
    from sfn_patterns_localstack.server import is_stock

    if is_stock():
        watch_parent()
        runpy.run_module("localstack.runtime.main", run_name="__main__", alter_sys=True)
        return
    from sfn_patterns_localstack import gc_tuning
    from sfn_patterns_localstack.emulation import profiler
    from sfn_patterns_localstack.emulation.fixes import (
        futex_hash,
        http_server,
        listen_backlog,
        service_catalog,
    )

    gc_tuning.tune()
    # Thousands of threads (three per parked execution) wake through one futex hash.
    futex_hash.apply()
    watch_parent()
    lean_imports()
    profiler.start_from_env()
    # Before the first request needs the catalog (plugins.py applies it again, harmlessly).
    service_catalog.apply()
    # Before the gateway's server is made (plugins.py applies it again, harmlessly).
    http_server.apply()
    # Before the gateway listens: a backlog of 50 drops SYNs in a burst of connections.
    listen_backlog.apply()
    runpy.run_module("localstack.runtime.main", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
