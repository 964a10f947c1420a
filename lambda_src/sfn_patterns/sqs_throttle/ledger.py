"""The starter's ledger table: every DynamoDB expression the sqs-throttle starter uses.

One item per execution the starter started and has not yet seen finish (key ``name``,
the execution name), so an execution that ``ListExecutions`` does not show yet still
holds its slot. An entry also says the latest its start can be sent (``start_by``: the
end of the run that recorded it, which its function's timeout bounds), so that every
starter reading the ledger, whatever its own timeout, knows how long an execution that
does not exist yet may still appear. And one **run lease** item (``name =
"#run-lease"``; execution names cannot contain ``#``), so at most one starter admits at
a time even when two run at once (a second deployment's schedule, an operator's manual
run): counting and starting is check-then-act, safe only with a single writer.

The lease is short and renewed by every admission: an entry is recorded in one
transaction with the renewal, conditional on the lease still being the recorder's.
Safety rests on ownership, not on time: a starter that stalled past its lease and was
taken over records nothing more, and the new holder's count already sees every entry
the old one recorded. The lease's length only bounds how long a crashed starter (its
process killed, so nobody releases the lease) keeps the others waiting.

Following Powertools' persistence layer, this class owns every expression of the
table; the starter asks it for transitions. A refused lease returns the holder's item
from the same call (``ReturnValuesOnConditionCheckFailure=ALL_OLD``), no extra read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEDGER_KEY = "name"
RUN_LEASE = "#run-lease"
# An entry's attribute: the latest its start can be sent (epoch seconds, the recorder's clock).
START_BY = "start_by"


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds the run lease, and until when (epoch seconds, the holder's clock)."""

    owner: str
    until: float


class LeaseLost(Exception):
    """The run lease is no longer this starter's: it ran out and another took it over."""

    def __init__(self, holder: LeaseHolder | None) -> None:
        self.holder = holder
        super().__init__(
            f"run lease now held by {holder.owner} until {holder.until:.0f}"
            if holder
            else "run lease released by its new holder"
        )


def _holder(item: dict[str, Any]) -> LeaseHolder:
    return LeaseHolder(
        owner=item.get("owner", {}).get("S", "?"),
        until=float(item.get("until", {}).get("N", "0")),
    )


def _error_code(error: Exception) -> str | None:
    response = getattr(error, "response", None) or {}
    return response.get("Error", {}).get("Code")


class Ledger:
    """Reads and conditional writes of one ledger table."""

    def __init__(self, dynamodb: Any, table: str, ttl_seconds: int) -> None:
        self.dynamodb = dynamodb
        self.table = table
        self.ttl_seconds = ttl_seconds

    # -- execution entries --------------------------------------------------------------

    def entries(self) -> list[tuple[str, float]]:
        """(execution name, the latest its start can be sent) of every entry, read consistently.

        An entry recorded without ``start_by`` (by a run of no known end) gives its time
        of recording.
        """
        found: list[tuple[str, float]] = []
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True}
        while True:
            page = self.dynamodb.scan(**kwargs)
            found.extend(
                (item[LEDGER_KEY]["S"], float(item.get(START_BY, item["recorded_at"])["N"]))
                for item in page.get("Items", [])
                if not item[LEDGER_KEY]["S"].startswith("#")
            )
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def record(
        self,
        name: str,
        now: float,
        owner: str,
        lease_seconds: float,
        *,
        start_by: float | None = None,
    ) -> None:
        """Note a start before making it, renewing ``owner``'s run lease in the same write.

        Recorded first, a crash after the start never hides the execution. Recorded
        with the renewal, only the lease's holder ever records: raises LeaseLost
        (naming the new holder, from the same call) when the lease is another's or gone.
        ``start_by`` is the latest the recorder can send the start: its run's end
        (None: a run of no known end, taken to send it at once).
        """
        try:
            self.dynamodb.transact_write_items(
                TransactItems=[
                    {
                        "Put": {
                            "TableName": self.table,
                            "Item": self._lease_item(owner, now, lease_seconds),
                            "ConditionExpression": "#owner = :me",
                            "ExpressionAttributeNames": {"#owner": "owner"},
                            "ExpressionAttributeValues": {":me": {"S": owner}},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.table,
                            "Item": self.entry_item(name, now, start_by),
                        }
                    },
                ]
            )
        except Exception as error:
            if _error_code(error) != "TransactionCanceledException":
                raise
            reasons = getattr(error, "response", {}).get("CancellationReasons") or [{}]
            if reasons[0].get("Code") != "ConditionalCheckFailed":
                raise  # e.g. a conflicting transaction: the caller's retry decides
            item = reasons[0].get("Item")
            raise LeaseLost(_holder(item) if item else None) from error

    def forget(self, name: str) -> None:
        """Drop an entry whose execution finished or was certainly never started."""
        self.dynamodb.delete_item(TableName=self.table, Key={LEDGER_KEY: {"S": name}})

    # -- run lease ----------------------------------------------------------------------

    def acquire_run_lease(
        self, owner: str, now: float, seconds: float, group: str | None = None
    ) -> LeaseHolder | None:
        """Take (or renew) the run lease for ``seconds``; None when taken, else who holds it.

        A lease whose time ran out (its starter crashed) is taken over. So is one held
        by an owner of ``group`` (owners named ``<group>/...``): runs that can never
        overlap, as one Lambda function's with reserved concurrency 1, so an earlier
        run's lease still held can only be a dead run's.
        """
        condition = "attribute_not_exists(#k) OR #until < :now OR #owner = :me"
        values = {":now": {"N": repr(now)}, ":me": {"S": owner}}
        if group:
            condition += " OR begins_with(#owner, :group)"
            values[":group"] = {"S": f"{group}/"}
        try:
            self.dynamodb.put_item(
                TableName=self.table,
                Item=self._lease_item(owner, now, seconds),
                ConditionExpression=condition,
                ExpressionAttributeNames={"#k": LEDGER_KEY, "#until": "until", "#owner": "owner"},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except Exception as error:
            if _error_code(error) != "ConditionalCheckFailedException":
                raise
            return _holder(getattr(error, "response", {}).get("Item") or {})
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
            if _error_code(error) != "ConditionalCheckFailedException":
                raise

    def entry_item(self, name: str, now: float, start_by: float | None = None) -> dict[str, Any]:
        """The item that records a start (see :meth:`record`)."""
        item = {
            LEDGER_KEY: {"S": name},
            "recorded_at": {"N": repr(now)},
            "expires_at": {"N": str(int(now) + self.ttl_seconds)},
        }
        if start_by is not None:
            item[START_BY] = {"N": repr(start_by)}
        return item

    def _lease_item(self, owner: str, now: float, seconds: float) -> dict[str, Any]:
        return {
            LEDGER_KEY: {"S": RUN_LEASE},
            "owner": {"S": owner},
            "until": {"N": repr(now + seconds)},
            "expires_at": {"N": str(int(now + seconds) + self.ttl_seconds)},
        }
