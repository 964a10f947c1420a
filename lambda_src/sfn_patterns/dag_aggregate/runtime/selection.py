"""Graph selectors, as dbt users know them: which tasks a run covers.

Kept in the runtime (standard library only) because the runtime Lambda applies a
run's ``select`` / ``exclude`` to the plan document; the ``sfn-patterns dag`` CLI
imports the same code to preview a selection, so both always agree.

Grammar of one selector (a list of them is a union; ``a,b`` is an intersection):

* ``name`` (``*`` and ``?`` globs allowed) or ``tag:name``: the matching tasks;
* ``+sel`` adds their ancestors, ``sel+`` their descendants (``2+sel``, ``sel+1``:
  at most that many edges away); ``+sel+`` both;
* ``@sel``: the tasks, their descendants, and every ancestor of those (what a
  rebuild of ``sel`` and everything downstream needs).

A run over a subset keeps the order of the full DAG: a selected task waits for its
nearest selected ancestors, also through tasks that are not selected (dbt does the
same). Tasks outside the selection are assumed to be up to date.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

_SELECTOR = re.compile(
    r"^(?P<at>@)?(?:(?P<up>\d*)\+)?(?P<value>(?:tag:)?[A-Za-z0-9_*?\[\]]+)(?:\+(?P<down>\d*))?$"
)
_UNLIMITED = -1


class SelectionError(ValueError):
    """A selector that does not parse or matches no task; the message says which."""


@dataclass(frozen=True)
class Selector:
    """One parsed selector (no intersection)."""

    text: str
    value: str
    tag: bool
    ancestors: int | None  # None: not requested; -1: unlimited; n: at most n edges
    descendants: int | None
    at: bool


@dataclass(frozen=True)
class Graph:
    """What selection needs of a plan: edges (both ways) and tags per task."""

    parents: Mapping[str, Sequence[str]]
    children: Mapping[str, Sequence[str]]
    tags: Mapping[str, Sequence[str]]

    @classmethod
    def from_tasks(cls, tasks: Mapping[str, Mapping[str, object]]) -> Graph:
        """From the plan document's ``tasks`` (``parents``, ``children``, ``tags``)."""
        return cls(
            parents={n: list(t.get("parents", ())) for n, t in tasks.items()},  # type: ignore[call-overload]
            children={n: list(t.get("children", ())) for n, t in tasks.items()},  # type: ignore[call-overload]
            tags={n: list(t.get("tags", ())) for n, t in tasks.items()},  # type: ignore[call-overload]
        )


def normalize(value: object, field: str = "select") -> tuple[str, ...]:
    """A selector list from execution input or the CLI: a string or a list of strings.

    Items are split on whitespace, as ``--select "a b"`` means a and b.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        items: Iterable[object] = [value]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise SelectionError(f"{field} must be a string or a list of strings, got {value!r}")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise SelectionError(f"{field} must hold strings, got {item!r}")
        out.extend(item.split())
    return tuple(out)


def _depth(text: str | None) -> int | None:
    if text is None:
        return None
    return int(text) if text else _UNLIMITED


def parse_selector(text: str) -> Selector:
    """Parse one selector (see the module docstring); raises :class:`SelectionError`."""
    match = _SELECTOR.match(text)
    if not match:
        raise SelectionError(
            f"cannot read selector {text!r}: expected name, +name, name+, +name+, @name "
            "or tag:x (names may use * and ?)"
        )
    if match.group("at") and match.group("up") is not None:
        raise SelectionError(f"selector {text!r}: @ already includes the ancestors; drop the +")
    value = match.group("value")
    tag = value.startswith("tag:")
    return Selector(
        text=text,
        value=(value[4:] if tag else value).lower(),
        tag=tag,
        ancestors=_depth(match.group("up")),
        descendants=_depth(match.group("down")),
        at=bool(match.group("at")),
    )


def _walk(start: Iterable[str], edges: Mapping[str, Sequence[str]], depth: int) -> set[str]:
    """Nodes reachable from ``start`` along ``edges`` within ``depth`` steps (-1: any)."""
    seen = set(start)
    queue = deque((node, 0) for node in seen)
    while queue:
        node, dist = queue.popleft()
        if depth != _UNLIMITED and dist >= depth:
            continue
        for nxt in edges.get(node, ()):
            if nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, dist + 1))
    return seen


def _matches(graph: Graph, selector: Selector) -> set[str]:
    if selector.tag:
        found = {
            name
            for name, tags in graph.tags.items()
            if any(fnmatch.fnmatchcase(tag, selector.value) for tag in tags)
        }
        if not found:
            known = sorted({t for tags in graph.tags.values() for t in tags})
            hint = f"; tags in the plan: {', '.join(known[:10])}" if known else "; no task has tags"
            raise SelectionError(
                f"selector {selector.text!r}: no task has tag {selector.value!r}{hint}"
            )
        return found
    if any(c in selector.value for c in "*?["):
        found = {n for n in graph.parents if fnmatch.fnmatchcase(n, selector.value)}
    else:
        found = {selector.value} & set(graph.parents)
    if not found:
        close = difflib.get_close_matches(selector.value, list(graph.parents), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise SelectionError(f"selector {selector.text!r} matches no task{hint}")
    return found


def _expand(graph: Graph, selector: Selector) -> set[str]:
    base = _matches(graph, selector)
    result = set(base)
    if selector.at:
        below = _walk(base, graph.children, _UNLIMITED)
        return below | _walk(below, graph.parents, _UNLIMITED)
    if selector.ancestors is not None:
        result |= _walk(base, graph.parents, selector.ancestors)
    if selector.descendants is not None:
        result |= _walk(base, graph.children, selector.descendants)
    return result


def _union(graph: Graph, selectors: Sequence[str]) -> set[str]:
    chosen: set[str] = set()
    for item in selectors:
        parts = [p for p in item.split(",") if p]
        if not parts:
            continue
        sets = [_expand(graph, parse_selector(p)) for p in parts]
        chosen |= set.intersection(*sets)
    return chosen


def select(graph: Graph, select: Sequence[str] = (), exclude: Sequence[str] = ()) -> set[str]:
    """The tasks a run covers: ``select`` (every task when empty) minus ``exclude``."""
    chosen = _union(graph, select) if select else set(graph.parents)
    chosen -= _union(graph, exclude)
    if not chosen:
        raise SelectionError(
            f"the selection (select {list(select) or 'all'}, exclude {list(exclude)}) "
            "leaves no task to run"
        )
    return chosen


def run_edges(graph: Graph, chosen: Iterable[str]) -> dict[str, set[str]]:
    """Parents of each chosen task among the chosen: nearest chosen ancestors.

    A path through tasks that are not chosen still orders the run (a -> x -> c with
    x left out makes c wait for a), so the selection never reorders the DAG.
    """
    chosen = set(chosen)
    memo: dict[str, frozenset[str]] = {}  # not chosen -> its nearest chosen ancestors

    def nearest(node: str) -> frozenset[str]:
        # Iterative post-order over unchosen ancestors (chains can be thousands long).
        stack = [node]
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            pending = [p for p in graph.parents.get(top, ()) if p not in chosen and p not in memo]
            if pending:
                stack.extend(pending)
                continue
            found: set[str] = set()
            for p in graph.parents.get(top, ()):
                found |= {p} if p in chosen else memo[p]
            memo[top] = frozenset(found)
            stack.pop()
        return memo[node]

    result: dict[str, set[str]] = {}
    for task in chosen:
        parents: set[str] = set()
        for p in graph.parents.get(task, ()):
            parents |= {p} if p in chosen else nearest(p)
        result[task] = parents
    return result
