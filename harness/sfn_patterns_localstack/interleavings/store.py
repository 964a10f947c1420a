"""The store every actor shares: moto's DynamoDB in-process, reached without HTTP.

Why moto: it evaluates DynamoDB's condition and update expressions, so a conditional write
is accepted or refused as DynamoDB would, and it runs in this process, so a request costs
milliseconds and the store can be read, saved and restored directly between steps.

Requests arrive here from the gateway (:mod:`.gateway`) as botocore built them (signed,
serialized); :meth:`MotoStore.send` hands them to moto's own request dispatcher under the
standard DynamoDB URL, whatever endpoint the runtime's client was given. The runtime's
clients point at a host that does not exist (:data:`RUNTIME_HOST`), so a request that
bypassed the gateway would fail loudly rather than reach any DynamoDB.

A protocol whose runtime uses several tables (the semaphore's lock table and waiter
queue) names the others in ``more_tables``; their items appear in snapshots as
``<table>:<key>``, and an item of a table with a range key as ``<hash>/<range>``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.awsrequest import AWSPreparedRequest, AWSResponse

#: The endpoint the runtime's clients are given: only the gateway answers it.
RUNTIME_HOST = "http://interleavings.invalid"

_DESERIALIZER = TypeDeserializer()

Item = Mapping[str, Any]
Snapshot = dict[str, Item]


class MotoStore:
    """moto's DynamoDB backend of one account and region, plus the items of the protocol's tables.

    Args:
        table_name: The table whose items :meth:`snapshot` names by their key alone.
        region: The region the runtime's clients use.
        more_tables: Other tables of the protocol (snapshot keys ``<table>:<key>``).

    """

    def __init__(self, table_name: str, region: str, *, more_tables: Sequence[str] = ()) -> None:
        self.table_name = table_name
        self.table_names = (table_name, *more_tables)
        self.region = region
        self._url = f"https://dynamodb.{region}.amazonaws.com/"
        #: The answers of the transactions that succeeded, by ClientRequestToken.
        self._transactions: dict[str, AWSResponse] = {}

    def send(self, request: AWSPreparedRequest) -> AWSResponse:
        """Apply one signed request through moto's dispatcher and return its HTTP answer.

        A TransactWriteItems sent again with the ClientRequestToken of one that succeeded
        (botocore fills the token in, and re-sends the same body after a lost answer)
        succeeds again without being applied twice, as on DynamoDB (moto applies it
        again, and its conditions then fail on its own first writes).
        """
        from moto.core.botocore_stubber import MockRawResponse

        token = _transaction_token(request)
        if token is not None and token in self._transactions:
            first = self._transactions[token]
            return AWSResponse(request.url, 200, first.headers, MockRawResponse(first.content))
        answer = moto_send(request, self._url)
        if token is not None and answer.status_code == 200:
            self._transactions[token] = answer
        return answer

    def _backend(self) -> Any:
        from moto.core.models import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[DEFAULT_ACCOUNT_ID][self.region]

    def _tables(self) -> dict[str, Any]:
        tables = self._backend().tables
        return {name: tables[name] for name in self.table_names}

    def drop(self) -> None:
        """Forget the tables if they exist (moto's backend directly), so setup creates them anew."""
        for name in self.table_names:
            self._backend().tables.pop(name, None)

    def snapshot(self) -> Snapshot:
        """Every item of the tables as plain Python values, by key (see the module docstring)."""
        items: Snapshot = {}
        for name, table in self._tables().items():
            prefix = "" if name == self.table_name else f"{name}:"
            for item in table.all_items():
                attributes = item.to_json()["Attributes"]
                value = {a: _DESERIALIZER.deserialize(raw) for a, raw in attributes.items()}
                key = str(item.hash_key.value)
                if item.range_key is not None:
                    key += f"/{item.range_key.value}"
                items[prefix + key] = value
        return items

    def save(self) -> Any:
        """The tables' items as they are now (for :meth:`restore`)."""
        return {name: copy.deepcopy(table.items) for name, table in self._tables().items()}

    def restore(self, saved: Any) -> None:
        """Put the tables' items back as :meth:`save` found them (each run starts equal)."""
        for name, table in self._tables().items():
            table.items = copy.deepcopy(saved[name])
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


def moto_send(request: AWSPreparedRequest, url: str) -> AWSResponse:
    """Hand one signed request to moto's dispatcher as if sent to ``url``; its HTTP answer.

    ``url`` is the service's standard endpoint, which moto routes by; the request keeps
    the endpoint the runtime's client gave it.
    """
    from moto.core.botocore_stubber import MockRawResponse
    from moto.core.models import botocore_stubber

    original = request.url
    request.url = url
    try:
        answer = botocore_stubber.process_request(request)
    finally:
        request.url = original
    if answer is None:  # pragma: no cover - moto routes every service URL
        raise RuntimeError(f"moto did not answer {request.method} {url}")
    status, headers, body = answer
    return AWSResponse(original, status, headers, MockRawResponse(body))


def changed(
    before: Snapshot, after: Snapshot
) -> tuple[dict[str, Item | None], dict[str, Item | None]]:
    """The items that differ between two snapshots (absent items as None), before and after."""
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return {k: before.get(k) for k in keys}, {k: after.get(k) for k in keys}
