"""moto's TransactWriteItems with the rollback image of fixes/moto_transaction_copy.py.

The same sequence of transactions (committed ones, and cancelled ones whose earlier
writes must be rolled back) runs once on moto as it is and once patched; after every
step both hold the same items and answer the same errors, ALL_OLD images included.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack.emulation.fixes import moto_transaction_copy


def _tables(ddb: Any) -> None:
    ddb.create_table(
        TableName="ranged",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
    )
    ddb.create_table(
        TableName="plain",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    for i in range(20):
        ddb.put_item(
            TableName="ranged",
            Item={
                "pk": {"S": f"p{i % 4}"},
                "sk": {"S": f"s{i}"},
                "n": {"N": "0"},
                "m": {"M": {"x": {"L": [{"N": str(i)}]}}},
            },
        )
        ddb.put_item(TableName="plain", Item={"pk": {"S": f"k{i}"}, "n": {"N": "0"}})


def _update(table: str, key: dict, expr: str, cond: str | None = None) -> dict:
    op: dict[str, Any] = {
        "TableName": table,
        "Key": key,
        "UpdateExpression": expr,
        "ExpressionAttributeValues": {":one": {"N": "1"}, ":cap": {"N": "1"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if cond:
        op["ConditionExpression"] = cond
    return {"Update": op}


STEPS: list[list[dict]] = [
    # Committed: an update of each table, a put, a delete and a check.
    [
        _update(
            "ranged", {"pk": {"S": "p1"}, "sk": {"S": "s1"}}, "SET n = n + :one, m.x[0] = :one"
        ),
        _update("plain", {"pk": {"S": "k3"}}, "SET n = n + :one"),
        {"Put": {"TableName": "plain", "Item": {"pk": {"S": "new"}, "n": {"N": "5"}}}},
        {"Delete": {"TableName": "ranged", "Key": {"pk": {"S": "p2"}, "sk": {"S": "s2"}}}},
        {
            "ConditionCheck": {
                "TableName": "plain",
                "Key": {"pk": {"S": "k4"}},
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ],
    # Cancelled by its last item: every earlier write is rolled back.
    [
        _update(
            "ranged", {"pk": {"S": "p1"}, "sk": {"S": "s5"}}, "SET n = n + :one, m.x[0] = :one"
        ),
        {"Put": {"TableName": "plain", "Item": {"pk": {"S": "k5"}, "n": {"N": "9"}}}},
        {"Delete": {"TableName": "ranged", "Key": {"pk": {"S": "p3"}, "sk": {"S": "s3"}}}},
        _update("plain", {"pk": {"S": "k3"}}, "SET n = n + :one", cond="n < :cap"),
    ],
    # Cancelled: an update of an item that does not exist yet, then a failed check.
    [
        _update("plain", {"pk": {"S": "fresh"}}, "SET n = :one"),
        _update("ranged", {"pk": {"S": "p0"}, "sk": {"S": "s0"}}, "SET n = n + :one"),
        {
            "ConditionCheck": {
                "TableName": "plain",
                "Key": {"pk": {"S": "missing"}},
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    ],
    # Committed again, on items a cancelled step touched.
    [
        _update("ranged", {"pk": {"S": "p1"}, "sk": {"S": "s5"}}, "SET n = n + :one"),
        _update("plain", {"pk": {"S": "k5"}}, "SET n = n + :one"),
    ],
    # Cancelled: a put in a new partition, a put over an item, an update creating one.
    [
        {"Put": {"TableName": "ranged", "Item": {"pk": {"S": "p9"}, "sk": {"S": "a"}}}},
        {"Put": {"TableName": "ranged", "Item": {"pk": {"S": "p2"}, "sk": {"S": "s6"}}}},
        _update("ranged", {"pk": {"S": "p3"}, "sk": {"S": "new"}}, "SET n = :one"),
        _update("plain", {"pk": {"S": "k3"}}, "SET n = n + :one", cond="n < :cap"),
    ],
    # Refused after a write: the same key twice (moto's ValidationException).
    [
        _update("plain", {"pk": {"S": "k7"}}, "SET n = n + :one"),
        _update("ranged", {"pk": {"S": "p8"}, "sk": {"S": "b"}}, "SET n = :one"),
        _update("ranged", {"pk": {"S": "p8"}, "sk": {"S": "b"}}, "SET n = :one"),
    ],
]


def _run() -> list[Any]:
    """Every step's outcome and both tables' contents after it."""
    from moto import mock_aws
    from moto.dynamodb import models

    seen: list[Any] = []
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        _tables(ddb)
        for step in STEPS:
            try:
                ddb.transact_write_items(TransactItems=step)
                outcome: Any = "committed"
            except ClientError as exc:
                outcome = (exc.response["Error"]["Code"], exc.response.get("CancellationReasons"))
            contents = {
                table: sorted(
                    (str(item) for item in ddb.scan(TableName=table)["Items"]),
                )
                for table in ("ranged", "plain")
            }
            # Partitions too: a rolled-back put must not leave an empty one behind.
            backend = models.dynamodb_backends["123456789012"]["us-east-1"]
            contents["partitions"] = sorted(str(k) for k in backend.get_table("ranged").items)
            seen.append((outcome, contents))
    return seen


def test_same_items_and_errors_as_moto_s_full_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb import models

    assert moto_transaction_copy.apply() is True
    patched = models.DynamoDBBackend.transact_write_items
    assert getattr(patched, "_sfnp_patched", False)
    with_image = _run()
    monkeypatch.setattr(models.DynamoDBBackend, "transact_write_items", patched.__wrapped__)
    as_moto = _run()
    assert with_image == as_moto
    outcomes = [outcome for outcome, _ in with_image]
    assert outcomes[0] == "committed" and outcomes[3] == "committed"
    assert outcomes[1][0] == "TransactionCanceledException"
    assert outcomes[2][0] == "TransactionCanceledException"
    assert outcomes[4][0] == "TransactionCanceledException"
    assert outcomes[5][0] == "ValidationException"


def test_the_undo_log_holds_only_what_the_transaction_writes() -> None:
    from moto import mock_aws
    from moto.dynamodb import models

    assert moto_transaction_copy.apply() is True
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        _tables(ddb)
        backend = models.dynamodb_backends["123456789012"]["us-east-1"]
        ranged, plain = backend.get_table("ranged"), backend.get_table("plain")
        log = moto_transaction_copy.UndoLog(backend, STEPS[0])
        # Two updates, a put and a delete; the check writes nothing.
        assert len(log.entries) == 4
        updated = backend.get_keys_value(ranged, {"pk": {"S": "p1"}, "sk": {"S": "s1"}})
        deleted = backend.get_keys_value(ranged, {"pk": {"S": "p2"}, "sk": {"S": "s2"}})
        by_key = {(id(e[0]), e[1], e[2]): e[3] for e in log.entries}
        copy_of_update = by_key[(id(ranged), *updated)]
        stored = ranged.items[updated[0]][updated[1]]
        assert copy_of_update is not stored and copy_of_update.to_json() == stored.to_json()
        assert by_key[(id(ranged), *deleted)] is ranged.items[deleted[0]][deleted[1]]
        new_key = backend.get_keys_value(plain, {"pk": {"S": "new"}})
        assert by_key[(id(plain), *new_key)] is moto_transaction_copy.ABSENT
