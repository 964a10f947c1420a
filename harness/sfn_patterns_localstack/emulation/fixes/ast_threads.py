"""One thread at a time builds or compiles Python AST objects (CPython 3.11).

CPython 3.11 keeps the AST converters' recursion depth in interpreter-wide state,
not per thread. Two threads converting at once (``ast.parse``, ``ast.literal_eval``,
``compile`` of an AST) can switch in the middle, when a garbage collection runs a
finalizer, and the one that finishes second finds the depth it started from changed:
``SystemError: AST constructor recursion depth mismatch``. LocalStack converts from
many threads: Step Functions' parser unescapes string literals with
``ast.literal_eval``, the traceback module parses a source line for its carets, and
werkzeug compiles each new route's builder from an AST (a Lambda environment's
executor endpoint). A verify run lost a semaphore test to it: a Step Functions
``lambda:invoke`` failed with ``Lambda.InternalError`` "AST constructor recursion depth
mismatch (before=132, after=129)".

The patch serialises every ``compile`` whose input or output is an AST (``ast.parse``
goes through ``compile`` with ``PyCF_ONLY_AST``): a re-entrant lock, held for the
conversion only; compiling source to bytecode, the common case, takes no lock.
"""

from __future__ import annotations

import ast
import builtins
import functools
import threading
from collections.abc import Callable
from typing import Any

_LOCK = threading.RLock()


def serialised(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (``compile``'s signature), holding the lock while it converts ASTs."""

    @functools.wraps(original)
    def compile(source, *args, **kwargs):
        # compile(source, filename, mode, flags=0, dont_inherit=False, optimize=-1)
        flags = args[2] if len(args) > 2 else kwargs.get("flags", 0)
        if isinstance(source, ast.AST) or flags & ast.PyCF_ONLY_AST:
            with _LOCK:
                return original(source, *args, **kwargs)
        return original(source, *args, **kwargs)

    compile._sfnp_serialised = True  # type: ignore[attr-defined]
    return compile


def apply() -> bool:
    """Replace ``builtins.compile`` once in this process (idempotent)."""
    if not getattr(builtins.compile, "_sfnp_serialised", False):
        builtins.compile = serialised(builtins.compile)
    return True
