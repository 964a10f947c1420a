"""A JSONPath variable read (``$name.field[0]``) is answered in Python, not on a JVM (4.14.0).

In the JSONPath query language, a state reads a workflow variable with ``$name``,
optionally followed by a path into its value (``"count.$": "States.MathAdd($polls,
1)"``, a Choice rule's ``"Variable": "$polls"``, ``"x.$": "$doc.items[0]"``); AWS
returns that part of the value the execution assigned.

4.14.0 answers every such read (``StringVariableSample._eval_body``,
``asl/component/common/string/string_expression.py``) by writing a JSONata expression
that declares every variable in scope, each value JSON-encoded, and evaluating it with
JSONata4Java on a Java VM through JPype (``asl/jsonata/jsonata.py``). The first read in a
LocalStack starts the VM, and each read after it costs the process far more CPU than
the read itself: on a machine looping over three reads, most of LocalStack's CPU went
to JPype's reference-queue thread and the VM's compilers (a job-poller with ``polling
= "loop-assign"`` reads its poll counter twice a poll).

The patch reads the value from the execution's variable store and follows the path's
``.field`` and ``[index]`` steps in Python, then pushes a copy, as 4.14.0 pushes the
value it decodes. It answers only where its answer is 4.14.0's: JSONPath mode, a path
of those two kinds of steps that finds a value at each, and a value whose strings hold
no double quote, backslash or control character and whose numbers JSONata4Java keeps
(it rounds an integer beyond 2**53 and hands a float with an integral value, such as
``2.0``, back as the integer). Anything else (a variable, field or index that is
missing, a wildcard or filter, JSONata mode, those strings and numbers) goes to
4.14.0's evaluation unchanged.

Why strings with those characters are left to 4.14.0: it keeps a string that ``Assign``
sets from a literal in the escaped form the definition spells it in (``"a\\"b"``
stays ``a\\"b``, ``"\\u00e9"`` stays ``\\u00e9``), and relies on its JSONata
round trip to decode it, which in turn mangles such a string inside an object or array
(read back as ``a\\\\\\"b``). Returning the stored value would expose the first, and
decoding it would change what 4.14.0 records in ``assignedVariables``: that is a
difference from AWS of its own, which no template here meets (their variables are
counters).
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)

# ``$name`` and then ``.field`` or ``[index]`` steps: what the fast path answers.
_REFERENCE = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*|\[[0-9]+\])*)$")
_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[([0-9]+)\]")
_EXACT_INTEGER = 2**53  # JSONata4Java rounds integers beyond a double's exact range
_PLAIN = re.compile(r'^[^"\\\x00-\x1f]*$')
_MISSING = object()


def _exact(value: Any) -> bool:
    """Whether 4.14.0's JSONata round trip hands ``value`` back unchanged.

    It does not for a string with a double quote, backslash or control character
    (4.14.0 stores literals escaped), an integer beyond 2**53 (rounded) or a float with
    an integral value (made an int).
    """
    if isinstance(value, str):
        plain = _PLAIN.match(value) is not None
    elif isinstance(value, bool) or value is None:
        plain = True
    elif isinstance(value, int):
        plain = -_EXACT_INTEGER <= value <= _EXACT_INTEGER
    elif isinstance(value, float):
        plain = not value.is_integer()
    elif isinstance(value, dict):
        plain = all(_exact(key) and _exact(item) for key, item in value.items())
    elif isinstance(value, list):
        plain = all(_exact(item) for item in value)
    else:
        plain = False
    return plain


def read(variables: Any, expression: str) -> Any:
    """The value ``expression`` selects from ``variables`` (a VariableStore).

    ``_MISSING`` when the fast path cannot answer it exactly as 4.14.0 would.
    """
    match = _REFERENCE.match(expression)
    if match is None:
        return _MISSING
    try:
        value = variables.get(match.group(1))
    except Exception:  # NoSuchVariable: 4.14.0's own evaluation says what happens
        return _MISSING
    for field, index in _STEP.findall(match.group(2)):
        if field:
            if not isinstance(value, dict) or field not in value:
                return _MISSING
            value = value[field]
        else:
            if not isinstance(value, list) or int(index) >= len(value):
                return _MISSING
            value = value[int(index)]
    return value if _exact(value) else _MISSING


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; return False (and change nothing) on any other version."""
    try:
        from localstack import version
        from localstack.services.stepfunctions.asl.component.common.query_language import (
            QueryLanguageMode,
        )
        from localstack.services.stepfunctions.asl.component.common.string import (
            string_expression,
        )
    except ImportError:
        return False
    sample_cls = getattr(string_expression, "StringVariableSample", None)
    if version.__version__ != LOCALSTACK_VERSION or sample_cls is None:
        LOG.warning("sfn-patterns variable reads not patched (localstack %s)", version.__version__)
        return False
    original = sample_cls._eval_body
    if getattr(original, "_sfnp_patched", False):
        return True

    def _eval_body(self: Any, env: Any) -> None:
        if self.query_language_mode == QueryLanguageMode.JSONPath:
            value = read(env.variable_store, self.expression)
            if value is not _MISSING:
                env.stack.append(copy.deepcopy(value))
                return
        original(self, env)

    _eval_body._sfnp_patched = True  # type: ignore[attr-defined]
    sample_cls._eval_body = _eval_body
    return True
