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
                {"AttributeName": "u", "AttributeType": "S"},
            ],
            GlobalSecondaryIndexes=[
                {
                    "IndexName": "by-g",
                    "KeySchema": [
                        {"AttributeName": "g", "KeyType": "HASH"},
                        {"AttributeName": "t", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                },
                {  # string keys throughout: the index path's window
                    "IndexName": "by-h",
                    "KeySchema": [
                        {"AttributeName": "g", "KeyType": "HASH"},
                        {"AttributeName": "u", "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                },
            ],
        )
        client.create_table(
            TableName="plain",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        )
        client.create_table(  # the semaphore's queue: a number sort key (the ticket)
            TableName="queue",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "ticket", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "ticket", "AttributeType": "N"},
            ],
        )
        for i in TICKETS:  # out of order, ints and floats, negatives, past a float's 2**53
            client.put_item(
                TableName="queue",
                Item={"pk": {"S": f"q{len(i) % 2}"}, "ticket": {"N": i}, "n": {"N": "1"}},
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
            if i % 7:
                item["u"] = {"S": f"u{i % 6}"}  # ties; some indexed items lack it
            client.put_item(TableName="ranged", Item=item)
            client.put_item(TableName="plain", Item={"pk": {"S": f"k{i}"}, "n": {"N": "1"}})
        yield client


TICKETS = [
    *(str((i * 37) % 101) for i in range(101)),
    "-5",
    "-0.5",
    "2.5",
    "10.25",
    "1e2",  # 100.0 as a float: moto stores it beside "100"
    "9007199254740993",  # 2**53 + 1: an int compares exactly, a float would not
    "9007199254740992",
]


def _numbers(pk: str, **values: str) -> dict[str, dict[str, str]]:
    return {":p": {"S": pk}, **{name: {"N": value} for name, value in values.items()}}


def _values(**values: str) -> dict[str, dict[str, str]]:
    return {name: {"S": value} for name, value in values.items()}


QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": _values(**{":p": "p1"})},
    {  # the oldest of a queue: no sort-key condition, a Limit, both directions
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _values(**{":p": "p1"}),
        "Limit": 1,
    },
    {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _values(**{":p": "p2"}),
        "ScanIndexForward": False,
        "Limit": 6,
    },
    {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _values(**{":p": "p0"}),
        "Limit": 40,  # p0 holds 40 items: a page the partition fills exactly
    },
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
    {  # a Limit the run fills exactly (p0 holds 20 ready items), then one short of it
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p0", ":s": "ready#"}),
        "Limit": 20,
    },
    {
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p0", ":s": "ready#"}),
        "ScanIndexForward": False,
        "Limit": 19,
    },
    {
        "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
        "ExpressionAttributeValues": _values(**{":p": "p1", ":a": "ready#0010", ":b": "task#0050"}),
        "ScanIndexForward": False,
        "Limit": 3,
    },
    {
        "KeyConditionExpression": "pk = :p AND sk < :a",
        "ExpressionAttributeValues": _values(**{":p": "p2", ":a": "task#0002"}),
        "Limit": 1,
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
    {"IndexName": "by-h", "KeyConditionExpression": "g = :g", "Limit": 4}
    | {"ExpressionAttributeValues": _values(**{":g": "g1"})},
    {
        "IndexName": "by-h",
        "KeyConditionExpression": "g = :g AND u >= :u",
        "ExpressionAttributeValues": _values(**{":g": "g0", ":u": "u2"}),
        "ScanIndexForward": False,
        "Limit": 3,
    },
    {
        "IndexName": "by-h",
        "KeyConditionExpression": "g = :g AND begins_with(u, :u)",
        "ExpressionAttributeValues": _values(**{":g": "g1", ":u": "u3"}),
        "Limit": 2,
    },
    {  # a Limit the matching items fill exactly, with items past them
        "IndexName": "by-h",
        "KeyConditionExpression": "g = :g AND u BETWEEN :a AND :b",
        "ExpressionAttributeValues": _values(**{":g": "g1", ":a": "u1", ":b": "u1"}),
        "Limit": 13,  # g1 holds 13 items with u = u1
    },
    {
        "IndexName": "by-g",
        "KeyConditionExpression": "g = :g AND t >= :t",
        "ExpressionAttributeValues": {":g": {"S": "g0"}, ":t": {"N": "2"}},
        "ScanIndexForward": False,
    },
]


NUMBER_QUERIES: list[dict[str, Any]] = [
    {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": _numbers("q1")},
    {  # the semaphore's oldest waiter
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _numbers("q0"),
        "Limit": 1,
    },
    {  # and the newest
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _numbers("q0"),
        "ScanIndexForward": False,
        "Limit": 1,
    },
    {
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _numbers("q1"),
        "ScanIndexForward": False,
        "Limit": 3,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket BETWEEN :a AND :b",
        "ExpressionAttributeValues": _numbers("q0", **{":a": "-1", ":b": "12"}),
        "Limit": 4,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket > :a",
        "ExpressionAttributeValues": _numbers("q1", **{":a": "2.5"}),
        "ScanIndexForward": False,
        "Limit": 5,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket >= :a",
        "ExpressionAttributeValues": _numbers("q0", **{":a": "9007199254740992"}),
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket < :a",
        "ExpressionAttributeValues": _numbers("q1", **{":a": "50"}),
        "Limit": 7,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket <= :a",
        "ExpressionAttributeValues": _numbers("q0", **{":a": "1E2"}),
        "Select": "COUNT",
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket = :a",
        "ExpressionAttributeValues": _numbers("q0", **{":a": "77"}),
    },
    {  # past 2**53 only as an int: as a float, 2**53 + 1 is 2**53 and not greater
        "KeyConditionExpression": "pk = :p AND ticket > :a",
        "ExpressionAttributeValues": _numbers("q0", **{":a": "9007199254740992"}),
    },
    {  # "100" and "1e2" tie; one page of one, then the next, both directions
        "KeyConditionExpression": "pk = :p AND ticket = :a",
        "ExpressionAttributeValues": _numbers("q1", **{":a": "100"}),
        "Limit": 1,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket = :a",
        "ExpressionAttributeValues": _numbers("q1", **{":a": "100"}),
        "ScanIndexForward": False,
        "Limit": 1,
    },
    {
        "KeyConditionExpression": "pk = :p AND ticket BETWEEN :a AND :b",
        "ExpressionAttributeValues": _numbers("q1", **{":a": "200", ":b": "300"}),
    },
]


def _pages(ddb: Any) -> list[Any]:
    """Every Query's pages, followed to the end by ExclusiveStartKey."""
    answers = []
    for table, query in [("ranged", q) for q in QUERIES] + [("queue", q) for q in NUMBER_QUERIES]:
        kwargs = {"TableName": table, **query}
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
    comparisons = _Comparisons(monkeypatch)
    query = {
        "TableName": "ranged",
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "p1", ":s": "ready#"}),
    }
    patched = ddb.query(**query)["Count"]
    patched_comparisons = comparisons.take()
    monkeypatch.setattr(Table, "query", Table.query.__wrapped__)
    monkeypatch.setattr(Table, "all_items", Table.all_items.__wrapped__)
    assert ddb.query(**query)["Count"] == patched == 20
    # moto compares every one of the table's 2,120 items at least once; the patch
    # compares the partition's (40), and sorts the 20 it keeps.
    assert comparisons.take() > 2_120
    assert patched_comparisons < 300


def test_a_first_page_with_a_limit_sorts_only_what_it_reads(ddb, monkeypatch) -> None:
    from moto.dynamodb.models.table import Table

    # One partition with 2,000 ready items, as a wide dag-aggregate run's.
    for chunk in range(0, 2000, 25):
        ddb.batch_write_item(
            RequestItems={
                "ranged": [
                    {"PutRequest": {"Item": _values(pk="run", sk=f"ready#{i:05d}")}}
                    for i in range(chunk, chunk + 25)
                ]
            }
        )
    comparisons = _Comparisons(monkeypatch)
    query = {
        "TableName": "ranged",
        "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
        "ExpressionAttributeValues": _values(**{":p": "run", ":s": "ready#"}),
        "Limit": 2,
    }
    patched = ddb.query(**query)
    patched_comparisons = comparisons.take()
    monkeypatch.setattr(Table, "query", Table.query.__wrapped__)
    monkeypatch.setattr(Table, "all_items", Table.all_items.__wrapped__)
    as_moto = ddb.query(**query)
    for page in (patched, as_moto):
        page.pop("ResponseMetadata")
    assert patched == as_moto and patched["LastEvaluatedKey"]["sk"] == {"S": "ready#00001"}
    # moto sorts the 2,000 (more than 10,000 comparisons); the patch sorts 3.
    assert comparisons.take() > 10_000
    assert patched_comparisons < 50
    # The semaphore's oldest waiter: no sort-key condition at all, Limit 1.
    monkeypatch.undo()
    comparisons = _Comparisons(monkeypatch)
    oldest = {
        "TableName": "ranged",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": _values(**{":p": "run"}),
        "Limit": 1,
    }
    patched = ddb.query(**oldest)
    assert patched["Items"][0]["sk"] == {"S": "ready#00000"} and "LastEvaluatedKey" in patched
    assert comparisons.take() < 50


def test_the_oldest_waiter_on_a_number_sort_key_sorts_no_waiter(ddb, monkeypatch) -> None:
    from moto.dynamodb.models.table import Table

    # 2,000 waiters in one queue partition, written out of ticket order.
    tickets = [(i * 7919) % 2000 for i in range(2000)]
    for chunk in range(0, 2000, 25):
        ddb.batch_write_item(
            RequestItems={
                "queue": [
                    {"PutRequest": {"Item": {"pk": {"S": "lock#queue"}, "ticket": {"N": str(t)}}}}
                    for t in tickets[chunk : chunk + 25]
                ]
            }
        )
    oldest = {
        "TableName": "queue",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "lock#queue"}},
        "Limit": 1,
        "ConsistentRead": True,
    }
    comparisons = _Comparisons(monkeypatch)
    patched = ddb.query(**oldest)
    patched_comparisons = comparisons.take()
    monkeypatch.setattr(Table, "query", Table.query.__wrapped__)
    monkeypatch.setattr(Table, "all_items", Table.all_items.__wrapped__)
    as_moto = ddb.query(**oldest)
    for page in (patched, as_moto):
        page.pop("ResponseMetadata")
    assert patched == as_moto and patched["Items"][0]["ticket"] == {"N": "0"}
    assert patched["LastEvaluatedKey"]["ticket"] == {"N": "0"}
    # moto sorts the 2,000 with DynamoType comparisons; the patch sorts plain ints.
    assert comparisons.take() > 10_000
    assert patched_comparisons < 50


class _Comparisons:
    """moto's key comparisons, counted: == on each item's partition key, < and == in sorts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from moto.dynamodb.models import dynamo_type

        self.count = 0
        for name in ("__eq__", "__lt__"):
            compare = getattr(dynamo_type.DynamoType, name)
            monkeypatch.setattr(dynamo_type.DynamoType, name, self._counted(compare))

    def _counted(self, compare: Any) -> Any:
        def counting(one: Any, other: Any) -> bool:
            self.count += 1
            return compare(one, other)

        return counting

    def take(self) -> int:
        """The count since the last take."""
        count, self.count = self.count, 0
        return count
