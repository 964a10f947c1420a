"""moto's DynamoDB parses each UpdateExpression and ConditionExpression once, not four times.

moto 5 parses a conditional UpdateItem's expressions twice each: the request handler
parses the UpdateExpression and the ConditionExpression to check the names and values
they use, and the backend parses both again to run them. It then deep-copies the
parsed UpdateExpression before validating it (the validator rewrites the tree it
validates). Measured with py-spy on LocalStack serving the status-table tracker's
claims and completions, parsing and that copy were about a seventh of its CPU per
UpdateItem; the tracker (pynamodb) sends the same few expression strings every time.

Four changes, each returning exactly what moto computed before:

* ``UpdateExpressionParser.make`` keeps the tree of each expression string (the tree
  depends on the string alone: placeholders stay placeholders). Nothing changes a
  tree ``make`` returned: the handler only reads it (``find_clauses``) and the
  validator works on its own copy, which moto makes with ``deepcopy``.
* That copy of a kept tree is made by unpickling the tree as it was parsed (one
  ``pickle.loads``, several times cheaper than ``deepcopy`` of the node graph, and the
  same objects: plain nodes with their parent links). Any other value is deep-copied
  as before.
* ``ConditionExpressionParser.parse`` keeps its result for the expression with the
  same names and values (the condition tree embeds both), so the backend's parse
  reuses the handler's parse of the same request. The result is only evaluated
  (``expr(item)`` reads the item, changes nothing) and the names and values it found
  are handed out as fresh lists.

* The validator's ten tree walkers (``DepthFirstTraverser``) each rebuild their
  node-class-to-handler map twice for every node they visit (``nodes_to_be_processed``
  and ``process``, despite the former's "Cached accessor" docstring). Every
  ``_processing_map`` of moto returns the same constant map of the walker's own
  methods, so each walker builds it once.

An expression that fails to parse raises as before (nothing is kept). Both caches are
bounded. The DynamoDB provider runs one operation at a time (plugins.serialized).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import json
import logging
import pickle
from collections import OrderedDict
from typing import Any

LOG = logging.getLogger(__name__)
# Distinct UpdateExpression strings kept: a table's data-access class has a handful.
MAX_UPDATE_TREES = 512
# Condition results kept: one per (expression, names, values); values change per request.
MAX_CONDITIONS = 256
_PICKLED = "_sfnp_pickled"


class _Bounded(OrderedDict):
    """A least-recently-used dict of at most ``limit`` entries."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def get_recent(self, key: Any) -> Any:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def keep(self, key: Any, value: Any) -> None:
        self[key] = value
        if len(self) > self.limit:
            self.popitem(last=False)


_update_trees = _Bounded(MAX_UPDATE_TREES)
_conditions = _Bounded(MAX_CONDITIONS)


def _condition_key(parser: Any) -> tuple[str, str, str] | None:
    try:
        return (
            parser.condition_expression,
            json.dumps(parser.expression_attribute_names, sort_keys=True),
            json.dumps(parser.expression_attribute_values, sort_keys=True),
        )
    except (TypeError, ValueError):  # not JSON: parse as moto does, keep nothing
        return None


def apply() -> bool:
    """Patch moto's DynamoDB once; return False (and change nothing) if its code changed."""
    try:
        from moto.dynamodb import comparisons
        from moto.dynamodb.parsing import ast_nodes, validators
        from moto.dynamodb.parsing.expressions import UpdateExpressionParser
    except ImportError:
        return False
    parser_class = comparisons.ConditionExpressionParser
    make = UpdateExpressionParser.make.__func__
    parse = parser_class.parse
    if getattr(parse, "_sfnp_patched", False):
        return True
    if (
        "return cls(token_list).parse()" not in inspect.getsource(make)
        or "self.node_to_validate = deepcopy(expression)"
        not in inspect.getsource(validators.Validator.__init__)
        or validators.deepcopy is not copy.deepcopy
        or "self.expr_attr_values_found.extend(" not in inspect.getsource(parse)
        or "return op" not in inspect.getsource(parse)
        or "return tuple(k for k in self._processing_map().keys())"
        not in inspect.getsource(ast_nodes.DepthFirstTraverser.nodes_to_be_processed)
        or "for class_key, processor in self._processing_map().items():"
        not in inspect.getsource(ast_nodes.DepthFirstTraverser.process)
    ):
        LOG.warning("sfn-patterns moto expression cache not applied: moto's code changed")
        return False

    @functools.wraps(make)
    def cached_make(cls: type, expression_str: str) -> Any:
        key = (cls, expression_str)
        tree = _update_trees.get_recent(key)
        if tree is None:
            tree = make(cls, expression_str)
            # A tree pickle cannot take is copied by deepcopy, as moto does.
            with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
                setattr(tree, _PICKLED, pickle.dumps(tree, pickle.HIGHEST_PROTOCOL))
            _update_trees.keep(key, tree)
        return tree

    @functools.wraps(copy.deepcopy)
    def deepcopy(value: Any, memo: Any = None) -> Any:
        pickled = getattr(value, _PICKLED, None) if memo is None else None
        if pickled is not None:
            return pickle.loads(pickled)
        return copy.deepcopy(value, memo)

    @functools.wraps(parse)
    def cached_parse(self: Any) -> Any:
        key = _condition_key(self) if self.condition_expression else None
        if key is None:
            return parse(self)
        kept = _conditions.get_recent(key)
        if kept is None:
            op = parse(self)
            _conditions.keep(
                key, (op, list(self.expr_attr_names_found), list(self.expr_attr_values_found))
            )
            return op
        op, names, values = kept
        self.expr_attr_names_found.extend(names)
        self.expr_attr_values_found.extend(values)
        return op

    traverser = ast_nodes.DepthFirstTraverser

    def processing_map(self: Any) -> tuple[dict, tuple]:
        kept = self.__dict__.get("_sfnp_map")
        if kept is None:
            handlers = self._processing_map()
            kept = self.__dict__["_sfnp_map"] = (handlers, tuple(handlers))
        return kept

    @functools.wraps(traverser.nodes_to_be_processed)
    def nodes_to_be_processed(self: Any) -> tuple:
        return processing_map(self)[1]

    @functools.wraps(traverser.process)
    def process(self: Any, node: Any) -> Any:
        for class_key, processor in processing_map(self)[0].items():
            if isinstance(node, class_key):
                return processor(node)
        return None

    cached_parse._sfnp_patched = True  # type: ignore[attr-defined]
    traverser.nodes_to_be_processed = nodes_to_be_processed
    traverser.process = process
    UpdateExpressionParser.make = classmethod(cached_make)
    validators.deepcopy = deepcopy
    parser_class.parse = cached_parse
    return True
