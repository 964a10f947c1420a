"""The starter's ledger table: every DynamoDB expression the sqs-throttle starter uses.

One item per execution the starter started and has not yet seen finish (key ``name``,
the execution name), so an execution that ``ListExecutions`` does not show yet still
holds its slot; and one **run lease** item (``name = "#run-lease"``; execution names
cannot contain ``#``), so at most one starter admits at a time even when two run at
once (a second deployment's schedule, an operator's manual run): counting and
starting is check-then-act, safe only with a single writer.

Following Powertools' persistence layer, this class owns every expression of the
table; the starter asks it for transitions. A refused lease returns the holder's item
from the same call (``ReturnValuesOnConditionCheckFailure=ALL_OLD``), no extra read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEDGER_KEY = "name"
RUN_LEASE = "#run-lease"


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds the run lease, and until when (epoch seconds, the holder's clock)."""

    owner: str
    until: float


class Ledger:
    """Reads and conditional writes of one ledger table."""

    def __init__(self, dynamodb: Any, table: str, ttl_seconds: int) -> None:
        self.dynamodb = dynamodb
        self.table = table
        self.ttl_seconds = ttl_seconds

    # -- execution entries --------------------------------------------------------------

    def entries(self) -> list[tuple[str, float]]:
        """(execution name, recorded at) of every entry, read consistently."""
        found: list[tuple[str, float]] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True}
        while True:
            page = self.dynamodb.scan(**kwargs)
            found.extend(
                (item[LEDGER_KEY]["S"], float(item["recorded_at"]["N"]))
                for item in page.get("Items", [])
                if not item[LEDGER_KEY]["S"].startswith("#")
            )
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def record(self, name: str, now: float) -> None:
        """Note a start before making it: a crash after the start never hides it."""
        self.dynamodb.put_item(
            TableName=self.table,
            Item={
                LEDGER_KEY: {"S": name},
                "recorded_at": {"N": repr(now)},
                "expires_at": {"N": str(int(now) + self.ttl_seconds)},
            },
        )

    def forget(self, name: str) -> None:
        """Drop an entry whose execution finished or was certainly never started."""
        self.dynamodb.delete_item(TableName=self.table, Key={LEDGER_KEY: {"S": name}})

    # -- run lease ----------------------------------------------------------------------

    def acquire_run_lease(self, owner: str, now: float, seconds: float) -> LeaseHolder | None:
        """Take the run lease for ``seconds``; None when taken, else who holds it.

        A lease whose time ran out (its starter crashed) is taken over.
        """
        try:
            self.dynamodb.put_item(
                TableName=self.table,
                Item={
                    LEDGER_KEY: {"S": RUN_LEASE},
                    "owner": {"S": owner},
                    "until": {"N": repr(now + seconds)},
                    "expires_at": {"N": str(int(now + seconds) + self.ttl_seconds)},
                },
                ConditionExpression="attribute_not_exists(#k) OR #until < :now OR #owner = :me",
                ExpressionAttributeNames={"#k": LEDGER_KEY, "#until": "until", "#owner": "owner"},
                ExpressionAttributeValues={":now": {"N": repr(now)}, ":me": {"S": owner}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except Exception as error:
            response = getattr(error, "response", None) or {}
            if response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            item = response.get("Item") or {}
            return LeaseHolder(
                owner=item.get("owner", {}).get("S", "?"),
                until=float(item.get("until", {}).get("N", "0")),
            )
        return None

    def release_run_lease(self, owner: str) -> None:
        """Give the lease back (only if still ours: a late release never frees another's)."""
        try:
            self.dynamodb.delete_item(
                TableName=self.table,
                Key={LEDGER_KEY: {"S": RUN_LEASE}},
                ConditionExpression="#owner = :me",
                ExpressionAttributeNames={"#owner": "owner"},
                ExpressionAttributeValues={":me": {"S": owner}},
            )
        except Exception as error:
            response = getattr(error, "response", None) or {}
            if response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
