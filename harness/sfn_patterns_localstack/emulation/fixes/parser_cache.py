"""A service's request parser is built once, however many requests arrive for it at once.

LocalStack 4.14.0 keeps one parser per service model behind ``functools.cache``
(``localstack.aws.protocol.parser.create_parser``, the same as 4.9.2's), which does not
hold back concurrent callers of a key not cached yet: each builds its own. A REST
service's parser compiles its URL rules (werkzeug, through ``ast``;
``op_router._create_service_map``), 57 ms of CPU for Lambda's. When 1,000 job-poller
executions were started on a LocalStack (4.9.2, on CPython 3.11) that had not served
Lambda yet, every Run Job task's Invoke missed the cache together: 1,000 threads
compiled the same rules one after another, no function ran for minutes, and a thread
dump showed them all in ``_create_service_map``. The builds need the GIL, so 1,000
builds cost 1,000 times the CPU of one.

``apply()`` puts a cache in front that builds each (service, protocol) parser once: the
first caller builds it under a lock, the callers that came meanwhile wait for it and get
the same parser, as AWS's endpoints have no such warm-up. Parsers are unchanged.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

LOG = logging.getLogger(__name__)

_APPLIED = "_sfnp_single_build"
# The modules that call create_parser by the name they imported, at request time.
CALLERS = (
    "localstack.aws.protocol.parser",
    "localstack.aws.handlers.service",
    "localstack.aws.skeleton",
)


def single_build(create: Any) -> Any:
    """``create`` memoised per arguments, each value built by one caller only."""
    built: dict[tuple, Any] = {}
    lock = threading.Lock()

    def create_parser(service: Any, protocol: Any = None) -> Any:
        key = (service, protocol)
        parser = built.get(key)
        if parser is None:
            with lock:  # builds contend for the GIL anyway; a waiter then finds it built
                parser = built.get(key)
                if parser is None:
                    parser = built[key] = create(service, protocol)
        return parser

    setattr(create_parser, _APPLIED, True)
    create_parser.__wrapped__ = create
    create_parser.__doc__ = create.__doc__
    return create_parser


def apply() -> bool:
    """Replace ``create_parser`` where LocalStack calls it; False if it moved."""
    import importlib

    modules = []
    for name in CALLERS:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            LOG.warning("sfn-patterns parser cache not applied: no module %s", name)
            return False
    current = getattr(modules[0], "create_parser", None)
    if current is None:
        LOG.warning("sfn-patterns parser cache not applied: no create_parser")
        return False
    if not getattr(current, _APPLIED, False):
        current = single_build(current)
    for module in modules:
        module.create_parser = current
    return True
