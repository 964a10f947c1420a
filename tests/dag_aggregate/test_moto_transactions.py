"""The ddb fixture's item-level transaction rollback (conftest) is still all or nothing."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from .runtime_fakes import TABLE


def _key(sk: str) -> dict[str, Any]:
    return {"pk": {"S": "r"}, "sk": {"S": sk}}


def test_a_cancelled_transaction_leaves_every_item_as_it_was(ddb: Any) -> None:
    ddb.put_item(TableName=TABLE, Item={**_key("run"), "n": {"N": "1"}})
    ddb.put_item(TableName=TABLE, Item={**_key("gone"), "n": {"N": "7"}})
    with pytest.raises(ClientError) as raised:
        ddb.transact_write_items(
            TransactItems=[
                # applied by moto before the last condition fails: all three undone
                {
                    "Update": {
                        "TableName": TABLE,
                        "Key": _key("run"),
                        "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}},
                    }
                },
                {"Put": {"TableName": TABLE, "Item": {**_key("new"), "n": {"N": "2"}}}},
                {"Delete": {"TableName": TABLE, "Key": _key("gone")}},
                {
                    "ConditionCheck": {
                        "TableName": TABLE,
                        "Key": _key("missing"),
                        "ConditionExpression": "attribute_exists(sk)",
                    }
                },
            ]
        )
    assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
    items = {
        i["sk"]["S"]: i["n"]["N"] for i in ddb.scan(TableName=TABLE, ConsistentRead=True)["Items"]
    }
    assert items == {"run": "1", "gone": "7"}


def test_a_transaction_that_holds_is_applied(ddb: Any) -> None:
    ddb.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {**_key("a"), "n": {"N": "1"}}}},
            {"Put": {"TableName": TABLE, "Item": {**_key("b"), "n": {"N": "2"}}}},
        ]
    )
    assert ddb.scan(TableName=TABLE)["Count"] == 2
