"""The store every actor shares: moto's DynamoDB in-process, reached without HTTP.

Why moto: it evaluates DynamoDB's condition and update expressions, so a conditional write
is accepted or refused as DynamoDB would, and it runs in this process, so a request costs
milliseconds and the store can be read, saved and restored directly between steps.

Requests arrive here from the gateway (:mod:`.gateway`) as botocore built them (signed,
serialized); :meth:`MotoStore.send` hands them to moto's own request dispatcher under the
standard DynamoDB URL, whatever endpoint the runtime's client was given, with one part of
DynamoDB's semantics moto lacks: a ``TransactWriteItems`` sent again with the
``ClientRequestToken`` of one that succeeded (botocore fills it in, and re-sends the same
body after a lost answer) succeeds again without being applied twice. The runtime's
clients point at a host that does not exist (:data:`RUNTIME_HOST`), so a request that
bypassed the gateway would fail loudly rather than reach any DynamoDB.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.awsrequest import AWSPreparedRequest, AWSResponse

#: The endpoint the runtime's clients are given: only the gateway answers it.
RUNTIME_HOST = "http://interleavings.invalid"

_DESERIALIZER = TypeDeserializer()

Item = Mapping[str, Any]
Snapshot = dict[str, Item]


class MotoStore:
    """moto's DynamoDB backend of one account and region, plus one table's items.

    Args:
        table_name: The table whose items :meth:`snapshot` reads and :meth:`restore` resets.
        region: The region the runtime's clients use.

    """

    def __init__(self, table_name: str, region: str) -> None:
        self.table_name = table_name
        self.region = region
        self._url = f"https://dynamodb.{region}.amazonaws.com/"
        #: Answers of the transactions that succeeded, by ClientRequestToken.
        self._transactions: dict[str, tuple[int, Any, Any]] = {}

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """Apply one signed request through moto's dispatcher and return its HTTP answer."""
        from moto.core.botocore_stubber import MockRawResponse
        from moto.core.models import botocore_stubber

        token = _transaction_token(request)
        answer = self._transactions.get(token) if token else None
        if answer is None:
            original = request.url
            request.url = self._url
            try:
                answer = botocore_stubber.process_request(request)
            finally:
                request.url = original
            if answer is None:  # pragma: no cover - moto routes every DynamoDB URL
                raise RuntimeError(f"moto did not answer {request.method} {self._url}")
            if token and answer[0] == 200:
                self._transactions[token] = answer
        status, headers, body = answer
        return AWSResponse(request.url, status, headers, MockRawResponse(body))

    def _table(self) -> Any:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region].tables[self.table_name]

    def drop(self) -> None:
        """Forget the table if it exists (moto's backend directly), so setup creates it anew."""
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region].tables.pop(self.table_name, None)

    def snapshot(self) -> Snapshot:
        """Every item of the table as plain Python values, by :func:`item_name`."""
        table = self._table()
        items: Snapshot = {}
        for entry in table.items.values():
            for item in entry.values() if table.has_range_key else [entry]:
                attributes = item.to_json()["Attributes"]
                value = {name: _DESERIALIZER.deserialize(raw) for name, raw in attributes.items()}
                ranged = item.range_key
                name = item_name(
                    str(item.hash_key.value), None if ranged is None else str(ranged.value)
                )
                items[name] = value
        return items

    def save(self) -> Any:
        """The table's items as they are now (for :meth:`restore`)."""
        return copy.deepcopy(self._table().items)

    def restore(self, saved: Any) -> None:
        """Put the table's items back as :meth:`save` found them (each run starts equal)."""
        self._table().items = copy.deepcopy(saved)
        self._transactions.clear()


def _transaction_token(request: AWSPreparedRequest) -> str | None:
    """The ClientRequestToken of a TransactWriteItems request (None for any other)."""
    target = request.headers.get("X-Amz-Target", b"")
    if isinstance(target, bytes):
        target = target.decode()
    if not target.endswith(".TransactWriteItems"):
        return None
    token = json.loads(request.body or b"{}").get("ClientRequestToken")
    return str(token) if token else None


def item_name(hash_value: str, range_value: str | None = None) -> str:
    """How an item is named in snapshots, writes and pauses: its hash key, then its range key."""
    return hash_value if range_value is None else f"{hash_value} {range_value}"


def changed(
    before: Snapshot, after: Snapshot
) -> tuple[dict[str, Item | None], dict[str, Item | None]]:
    """The items that differ between two snapshots (absent items as None), before and after."""
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return {k: before.get(k) for k in keys}, {k: after.get(k) for k in keys}
