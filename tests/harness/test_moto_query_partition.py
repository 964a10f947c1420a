"""moto's Query with the partition candidates of fixes/moto_query_partition.py.

The same Queries (key conditions of every kind, pages, both directions, filters,
counts, an index with ties in its sort key) run on moto as it is and patched: the
answers are identical. And the cost: a Query of a 10-item partition no longer sorts
every item of the table (counted as sort-key comparisons).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sfn_patterns_localstack.emulation.fixes import moto_query_partition


@pytest.fixture
def ddb() -> Iterator[Any]:
    from moto import mock_aws

    assert moto_query_partition.apply() is True
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="ranged",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "S"},
                {"AttributeName": "t", "AttributeType": "N"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by-g",
                    "KeySchema": [
                        {"AttributeName": "g", "KeyType": "HASH"},
                        {"AttributeName": "t", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
            ],
        )
        client.create_table(
            TableName="plain",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        )
        for i in range(120):
            item = {
                "pk": {"S": f"p{i % 3}"},
                "sk": {"S": f"{'ready' if i % 2 else 'task'}#{i:04d}"},
                "n": {"N": str(i % 7)},
            }
            if i % 5:  # some items are not in the index
                item["g"] = {"S": f"g{i % 2}"}
                item["t"] = {"N": str(i % 4)}  # ties in the index's sort key
            client.put_item(TableName="ranged", Item=item)
            client.put_item(TableName="plain", Item={"pk": {"S": f"k{i}"}, "n": {"N": "1"}})
        yield client


def _values(**values: str) -> dict[str, dict[str, str]]:
    return {name: {"S": value} for name, value in values.items()}


QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": _values(**{":p": "p1"})},
    {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p0", ":s": "ready#"}),
        "Limit": 7,
    },
    {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p2", ":s": "task#"}),
        "ScanIndexForward": False,
        "Limit": 5,
    },
    {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": _values(**{":p": "p1", ":a": "ready#0010", ":b": "task#0050"}),
    },
    {
        "KeyConditionExpression": "pk = :p AND sk > :a",
        "ExpressionAttributeValues": {
            **_values(**{":p": "p0", ":a": "task#0030"}),
            ":n": {"N": "3"},
        },
        "FilterExpression": "n > :n",
    },
    {
        "KeyConditionExpression": "pk = :p AND sk <= :a",
        "ExpressionAttributeValues": _values(**{":p": "p2", ":a": "ready#0090"}),
        "Select": "COUNT",
    },
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": _values(**{":p": "none"})},
    {
        "TableName": "plain",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _values(**{":p": "k17"}),
    },
    {
        "IndexName": "by-g",
        "KeyConditionExpression": "g = :g",
        "ExpressionAttributeValues": _values(**{":g": "g1"}),
        "Limit": 9,
    },
    {
        "IndexName": "by-g",
        "KeyConditionExpression": "g = :g AND t >= :t",
        "ExpressionAttributeValues": {":g": {"S": "g0"}, ":t": {"N": "2"}},
        "ScanIndexForward": False,
    },
]


def _pages(ddb: Any) -> list[Any]:
    """Every Query's pages, followed to the end by ExclusiveStartKey."""
    answers = []
    for query in QUERIES:
        kwargs = {"TableName": "ranged", **query}
        while True:
            page = ddb.query(**kwargs)
            page.pop("ResponseMetadata")
            answers.append(page)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return answers


def test_the_same_answers_as_moto_s_whole_table_query(ddb, monkeypatch) -> None:
    from moto.dynamodb.models.table import Table

    patched = _pages(ddb)
    monkeypatch.setattr(Table, "query", Table.query.__wrapped__)
    monkeypatch.setattr(Table, "all_items", Table.all_items.__wrapped__)
    as_moto = _pages(ddb)
    assert patched == as_moto
    # The queries are not trivial: several pages, empty and non-empty answers.
    assert len(patched) > len(QUERIES)
    assert any(p["Count"] == 0 for p in patched) and any(p["Count"] > 5 for p in patched)


def test_a_query_of_a_small_partition_does_not_sort_the_table(ddb, monkeypatch) -> None:
    from moto.dynamodb.models import dynamo_type
    from moto.dynamodb.models.table import Table

    for chunk in range(0, 2000, 25):
        ddb.batch_write_item(
            RequestItems={
                "ranged": [
                    {"PutRequest": {"Item": _values(pk=f"other{i % 40}", sk=f"task#{i:05d}")}}
                    for i in range(chunk, chunk + 25)
                ]
            }
        )
    comparisons = 0

    def counted(compare: Any) -> Any:
        def count(self: Any, other: Any) -> bool:
            nonlocal comparisons
            comparisons += 1
            return compare(self, other)

        return count

    # Key comparisons: moto's == on every item's partition key, < and == in its sort.
    for name in ("__eq__", "__lt__"):
        monkeypatch.setattr(
            dynamo_type.DynamoType, name, counted(getattr(dynamo_type.DynamoType, name))
        )
    query = {
        "TableName": "ranged",
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p1", ":s": "ready#"}),
    }
    patched = ddb.query(**query)["Count"]
    patched_comparisons, comparisons = comparisons, 0
    monkeypatch.setattr(Table, "query", Table.query.__wrapped__)
    monkeypatch.setattr(Table, "all_items", Table.all_items.__wrapped__)
    assert ddb.query(**query)["Count"] == patched == 20
    # moto compares every one of the table's 2,120 items at least once; the patch
    # compares the partition's (40), and sorts the 20 it keeps.
    assert comparisons > 2_120
    assert patched_comparisons < 300
