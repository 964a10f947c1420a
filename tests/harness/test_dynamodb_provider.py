"""DynamoDB under LocalStack is served by moto through this project's provider."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError

pytestmark = pytest.mark.integration


def test_conditional_writes_and_indexes_work(aws) -> None:
    ddb = aws("dynamodb")
    table = f"provider-{uuid.uuid4().hex[:6]}"
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "status", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-status",
                "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    ddb.put_item(
        TableName=table,
        Item={"pk": {"S": "a"}, "status": {"S": "pending"}},
        ConditionExpression="attribute_not_exists(pk)",
    )
    with pytest.raises(ClientError) as raised:
        ddb.put_item(
            TableName=table,
            Item={"pk": {"S": "a"}, "status": {"S": "pending"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    assert raised.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    found = ddb.query(
        TableName=table,
        IndexName="by-status",
        KeyConditionExpression="#s = :s",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "pending"}},
    )
    assert [item["pk"]["S"] for item in found["Items"]] == ["a"]


def test_concurrent_conditional_updates_of_one_item_are_atomic(aws) -> None:
    """Many threads race to take the same items; each item must be taken exactly once.

    Without the provider's lock, moto let two conditional UpdateItems on one item
    both succeed a few times in every few hundred races.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    ddb = aws("dynamodb")
    table = f"race-{uuid.uuid4().hex[:6]}"
    ddb.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    items = [f"item-{i}" for i in range(300)]
    # Seeded 25 to a request (BatchWriteItem's maximum): the setup is not the race.
    for first in range(0, len(items), 25):
        requests = [
            {"PutRequest": {"Item": {"pk": {"S": pk}, "status": {"S": "pending"}, "n": {"N": "0"}}}}
            for pk in items[first : first + 25]
        ]
        unprocessed = {table: requests}
        while unprocessed:
            unprocessed = ddb.batch_write_item(RequestItems=unprocessed)["UnprocessedItems"]
    start_together = threading.Barrier(8)

    def take(worker: int) -> list[str]:
        client = aws("dynamodb")
        won = []
        start_together.wait()
        for pk in items:
            try:
                client.update_item(
                    TableName=table,
                    Key={"pk": {"S": pk}},
                    UpdateExpression="SET #s = :taken, taker = :me ADD n :one",
                    ConditionExpression="attribute_exists(pk) AND #s IN (:pending, :failed)",
                    ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={
                        ":taken": {"S": "taken"},
                        ":pending": {"S": "pending"},
                        ":failed": {"S": "failed"},
                        ":me": {"N": str(worker)},
                        ":one": {"N": "1"},
                    },
                    ReturnValues="ALL_NEW",
                )
                won.append(pk)
            except ClientError as error:
                assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
        return won

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(take, range(8)))
    taken = [pk for won in results for pk in won]
    assert sorted(taken) == sorted(items), "an item was taken twice or not at all"
