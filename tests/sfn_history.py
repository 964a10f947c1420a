"""Reading a Step Functions execution history in tests: which states it entered.

One helper for every pattern's tests (job-poller, semaphore, ...), so that "the
states an execution entered" means the same thing everywhere.
"""

from __future__ import annotations

from typing import Any


def states_entered(events: list[dict[str, Any]]) -> list[str]:
    """Names of the states an execution entered, in history order.

    One name per ``*StateEntered`` event (``TaskStateEntered``, ``ChoiceStateEntered``,
    ... and the states inside Map iterations), so also one per billed state
    transition, retries aside. The event's ``stateEnteredEventDetails`` is what is
    read: an event without it names no state and is skipped, whatever its type.
    """
    return [
        e["stateEnteredEventDetails"]["name"]
        for e in events
        if e["type"].endswith("StateEntered") and "stateEnteredEventDetails" in e
    ]
