"""The five statuses of a task and which transitions between them are legal.

There are deliberately no other statuses: a multi-step flow is a chain of
lifecycles (step 1's ``succeeded`` is step 2's ``pending``), so a new step never
needs a new status, and every query and dashboard keeps working unchanged.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """The lifecycle of one task; the values are what is stored in DynamoDB.

    A ``str`` enum whose ``str()`` and ``format()`` are the value on every Python
    the runtime supports (``enum.StrEnum`` is 3.11+).
    """

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    FAILED = "failed"
    SUCCEEDED = "succeeded"
    IGNORED = "ignored"


#: Statuses from which a worker may acquire a task (in_progress only once its lease expired).
STARTABLE: frozenset[Status] = frozenset({Status.PENDING, Status.FAILED, Status.IN_PROGRESS})

#: Statuses an operator may send back to pending with ``Tracker.reset``. Succeeded and
#: in_progress are excluded: resetting them would run a finished task twice or steal a
#: live lease, which is exactly what the tracker exists to prevent.
RESETTABLE: frozenset[Status] = frozenset({Status.FAILED, Status.IGNORED})

#: Every legal transition, for documentation and tests. ``in_progress -> in_progress`` is
#: a reclaim of an expired lease by another worker (a new attempt).
TRANSITIONS: frozenset[tuple[Status, Status]] = frozenset(
    {
        (Status.PENDING, Status.IN_PROGRESS),
        (Status.FAILED, Status.IN_PROGRESS),
        (Status.IN_PROGRESS, Status.IN_PROGRESS),
        (Status.IN_PROGRESS, Status.SUCCEEDED),
        (Status.IN_PROGRESS, Status.FAILED),
        (Status.IN_PROGRESS, Status.IGNORED),
        (Status.FAILED, Status.PENDING),
        (Status.IGNORED, Status.PENDING),
    }
)


def parse_status(value: str | Status) -> Status:
    """Validate a status given as text (CLI, API) so typos fail loudly, not as empty results."""
    try:
        return Status(value)
    except ValueError:
        allowed = ", ".join(s.value for s in Status)
        raise ValueError(f"unknown status {value!r}; expected one of: {allowed}") from None
