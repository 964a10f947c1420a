"""Step Functions parses a definition once, not once per execution (LocalStack 4.14.0).

Profiled on a 300-task dag-aggregate run (py-spy, the LocalStack 4.9.2 process holding
the GIL), LocalStack's Step Functions spent a third of its time in
``AmazonStateLanguageParser.parse``: every execution re-lexes, re-parses and
re-builds its state machine's definition (ANTLR), and a sixth in
``jsonpath_ng.parse``, which builds a new PLY parser for every JSONPath it evaluates
(``$.run_id`` in a Parameters block, a ResultPath, ...; about 1 ms each with
jsonpath-ng 1.16). The emulator is bound to one core by the GIL, so that work set how
many executions a second it could run: a 2,000-task DAG with 40 tasks in flight took
over ten minutes. 4.14.0 does the same work: ``ExecutionWorker._get_evaluation_entrypoint``
(``backend/execution_worker.py``) parses the definition for every execution, and
``extract_json`` (``asl/utils/json_path.py``) and ``ResultPath`` call ``parse`` for
every evaluation; neither module caches.

AWS parses a definition when it is created, so caching is what the real service
does. Both caches are keyed by the exact text; the values are safe to share:

* a parsed program's components keep no per-execution state (the execution's
  ``Environment`` carries it; LocalStack itself evaluates one Map iteration program
  in many threads at once), and a definition that fails to parse is not cached;
* a parsed JSONPath's ``find`` and ``update`` read the path objects, never change them.

TestState's parser (``TestStateAmazonStateLanguageParser.parse``, which in 4.14.0 also
takes a state name) has its own ``parse`` and is left uncached.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
DEFINITIONS_KEPT = 256
PATHS_KEPT = 4096


def _cached(function: Callable[[str], Any], size: int) -> Callable[[str], Any]:
    cached = functools.lru_cache(maxsize=size)(function)
    cached._sfnp_patched = True  # type: ignore[attr-defined]
    return cached


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.common.path import result_path
        from localstack.services.stepfunctions.asl.parse import asl_parser
        from localstack.services.stepfunctions.asl.utils import json_path
        from localstack.services.stepfunctions.backend import execution_worker
    except ImportError:
        return False
    parser_cls = asl_parser.AmazonStateLanguageParser
    if (
        version.__version__ != LOCALSTACK_VERSION
        or execution_worker.AmazonStateLanguageParser is not parser_cls
        or not callable(getattr(json_path, "parse", None))
        or not callable(getattr(result_path, "parse", None))
    ):
        LOG.warning("sfn-patterns parse cache not applied (localstack %s)", version.__version__)
        return False
    if getattr(parser_cls.parse, "_sfnp_patched", False):
        return True
    parser_cls.parse = staticmethod(_cached(parser_cls.parse, DEFINITIONS_KEPT))
    json_path.parse = _cached(json_path.parse, PATHS_KEPT)
    result_path.parse = _cached(result_path.parse, PATHS_KEPT)
    return True
