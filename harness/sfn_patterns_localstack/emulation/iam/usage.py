"""Which statement allowed each call, and which calls were denied: the proof a grant is needed.

Every allowed call counts against the statement that allowed it, keyed by (role,
policy, statement, action, resource pattern); every denial (and, in audit mode, every
call that would have been denied) counts against (principal, action, resource,
reason). A statement whose action allowed nothing in a whole test run is a grant
nothing needs.

The test LocalStacks are killed, not stopped (``server.LocalStack.stop``), so the
recorder writes its file atomically every few seconds while anything changed, and at
interpreter exit for a graceful stop. ``merge_usage`` sums the files of all pytest
workers; ``unused_actions`` lists the granted actions that allowed nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy, StatementRef

ALLOW_FIELDS = ("role", "policy", "statement", "action", "resource_pattern")
DENY_FIELDS = ("principal", "action", "resource", "reason", "enforced")


class UsageRecorder:
    """Thread-safe counters, flushed to ``path`` (if any) every ``interval`` seconds."""

    def __init__(self, path: Path | None, interval: float = 2.0) -> None:
        self.path = path
        self.interval = interval
        self._allowed: dict[tuple, int] = {}
        self._denied: dict[tuple, int] = {}
        self._policies: dict[str, Sequence[NamedPolicy]] = {}
        self._lock = threading.Lock()
        self._dirty = threading.Event()
        self._started = False

    def allowed(self, role: str, statement: StatementRef, action: str) -> None:
        """Count one call ``statement`` allowed (``action``: the action requested)."""
        key = (role, statement.policy, statement.label, action, statement.resource_pattern)
        with self._lock:
            self._allowed[key] = self._allowed.get(key, 0) + 1
        self._dirty.set()

    def denied(
        self, principal: str, action: str, resource: str, reason: str, enforced: bool
    ) -> None:
        """Count one denial (``enforced`` False: audit mode, the call went through)."""
        key = (principal, action, resource, reason, enforced)
        with self._lock:
            self._denied[key] = self._denied.get(key, 0) + 1
        self._dirty.set()

    def role_policies(self, role: str, policies: Sequence[NamedPolicy]) -> None:
        """Keep the identity policies of a role that made calls (for ``unused_actions``).

        Called per evaluated request with the cached tuple: a no-op unless it changed.
        """
        if self._policies.get(role) is policies:
            return
        with self._lock:
            self._policies[role] = policies
        self._dirty.set()

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """The counters as the JSON document the file holds."""
        with self._lock:
            allowed = sorted(self._allowed.items(), key=lambda kv: tuple(map(str, kv[0])))
            denied = sorted(self._denied.items(), key=lambda kv: tuple(map(str, kv[0])))
            policies = {
                role: [{"name": p.name, "document": p.document} for p in named]
                for role, named in sorted(self._policies.items())
            }
        return {
            "policies": policies,
            "allowed": [
                {**dict(zip(ALLOW_FIELDS, k, strict=True)), "calls": n} for k, n in allowed
            ],
            "denied": [{**dict(zip(DENY_FIELDS, k, strict=True)), "calls": n} for k, n in denied],
        }

    def flush(self) -> None:
        """Write the file atomically (a reader never sees half of it)."""
        if self.path is None:
            return
        self._dirty.clear()
        document = self.snapshot()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=1, sort_keys=True)
        os.replace(tmp, self.path)

    def start(self) -> None:
        """Flush periodically on a daemon thread and once more at exit."""
        if self.path is None or self._started:
            return
        self._started = True
        atexit.register(self.flush)
        threading.Thread(target=self._loop, name="sfnp-iam-usage", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self._dirty.wait()
            threading.Event().wait(self.interval)  # batch a burst of calls into one write
            self.flush()


def merge_usage(files: Iterable[Path]) -> dict[str, list[dict[str, Any]]]:
    """Sum the usage files of several LocalStacks (missing or empty files are skipped)."""
    allowed: dict[tuple, int] = {}
    denied: dict[tuple, int] = {}
    policies: dict[str, Any] = {}
    for path in files:
        try:
            document = json.loads(Path(path).read_text())
        except (OSError, ValueError):
            continue
        policies.update(document.get("policies", {}))
        for row in document.get("allowed", []):
            key = tuple(row[f] for f in ALLOW_FIELDS)
            allowed[key] = allowed.get(key, 0) + int(row["calls"])
        for row in document.get("denied", []):
            key = tuple(row[f] for f in DENY_FIELDS)
            denied[key] = denied.get(key, 0) + int(row["calls"])
    return {
        "policies": dict(sorted(policies.items())),
        "allowed": [
            {**dict(zip(ALLOW_FIELDS, k, strict=True)), "calls": n}
            for k, n in sorted(allowed.items(), key=lambda kv: tuple(map(str, kv[0])))
        ],
        "denied": [
            {**dict(zip(DENY_FIELDS, k, strict=True)), "calls": n}
            for k, n in sorted(denied.items(), key=lambda kv: tuple(map(str, kv[0])))
        ],
    }


@lru_cache(maxsize=1024)
def _action_pattern(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.IGNORECASE)


def unused_actions(
    usage: Mapping[str, Any],
    policies: Mapping[str, Sequence[NamedPolicy]] | None = None,
) -> list[dict[str, str]]:
    """Every (role, policy, statement, action pattern) of an Allow that allowed no call.

    ``policies`` maps a role name to its identity policies, named as the recorder names
    them (``ROLE/POLICY`` for inline, the ARN for managed); by default the policies the
    usage file kept for every role that made a call. A role that made no call at all is
    only covered when passed here. ``NotAction`` statements are skipped: what they
    grant cannot be listed.
    """
    if policies is None:
        policies = {
            role: [NamedPolicy(p["name"], p["document"]) for p in named]
            for role, named in usage.get("policies", {}).items()
        }
    used: dict[tuple[str, str, str], list[str]] = {}
    for row in usage.get("allowed", []):
        used.setdefault((row["role"], row["policy"], row["statement"]), []).append(row["action"])
    unused: list[dict[str, str]] = []
    for role, named in policies.items():
        for policy in named:
            statements = policy.document.get("Statement", [])
            if isinstance(statements, Mapping):
                statements = [statements]
            for index, statement in enumerate(statements):
                if statement.get("Effect") != "Allow" or "Action" not in statement:
                    continue
                sid = statement.get("Sid")
                label = f"{policy.name}#{sid}" if sid else f"{policy.name}#[{index}]"
                actions = statement["Action"]
                actions = [actions] if isinstance(actions, str) else list(actions)
                calls = used.get((role, policy.name, label), [])
                for pattern in actions:
                    if not any(_action_pattern(pattern).fullmatch(a) for a in calls):
                        unused.append(
                            {
                                "role": role,
                                "policy": policy.name,
                                "statement": label,
                                "action": pattern,
                            }
                        )
    return unused
