"""Fixtures of the dag-aggregate tests: moto DynamoDB with the runs table's layout."""

from __future__ import annotations

import copy
import types
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from .runtime_fakes import TABLE, SerializedClient


def _item_level_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make moto's TransactWriteItems save and restore the items it writes, not the tables.

    moto deep-copies every table a transaction names before applying it, so that it
    can roll a cancelled one back: with a few hundred items in the runs table, each
    transaction cost about 2 s (the wide-DAG test: 41 transactions, 95 s). Here the
    table copy is skipped and the transaction's own items are saved instead, and put
    back (or deleted again) when it is cancelled: the same all-or-nothing outcome.
    """
    from moto.dynamodb import models

    real = models.DynamoDBBackend.transact_write_items
    no_table_copy = types.SimpleNamespace(
        deepcopy=lambda obj, memo=None: (
            obj if isinstance(obj, models.Table) else copy.deepcopy(obj, memo)
        )
    )

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        saved = []
        for entry in transact_items:
            kind, op = next(iter(entry.items()))
            table = self.get_table(op["TableName"])
            key = (
                {a: op["Item"][a] for a in (table.hash_key_attr, table.range_key_attr) if a}
                if kind == "Put"
                else op["Key"]
            )
            current = self.get_item(op["TableName"], key)
            before = current.to_json()["Attributes"] if current else None
            saved.append((op["TableName"], key, before))
        try:
            with monkeypatch.context() as patch:
                patch.setattr(models, "copy", no_table_copy)
                real(self, transact_items)
        except Exception:
            for table_name, key, attributes in reversed(saved):
                if attributes is None:
                    self.delete_item(table_name, key)
                else:
                    self.put_item(table_name, attributes)
            raise

    monkeypatch.setattr(models.DynamoDBBackend, "transact_write_items", transact_write_items)


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    _item_level_transactions(monkeypatch)

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = SerializedClient(boto3.client("dynamodb", region_name="us-east-1"))
        # Same layout as modules/dag-aggregate (dependency.tf).
        client.create_table(
            TableName=TABLE,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
        )
        yield client
