"""The DynamoDB table layout, in one place.

Terraform creates the production table and :meth:`Tracker.create_table_if_not_exists`
creates test tables; both must agree exactly, so every name lives here.

Key design: a single hash key ``pk = "{use_case_id}#{task_id}"`` and no range key.
Every read and write of one task knows both parts, so a composite string is enough;
keeping the use case inside the key (rather than as a hash key with ``task_id`` as
range key) spreads one busy use case over many partitions instead of one item
collection, and makes ``use_case_id`` impossible to forget in a condition.

The GSI ``status-update_time-index`` answers "all failed tasks of use case U in the
last 30 days" with a Query: its hash key ``status_key = "{use_case_id}#{status}#{shard:02d}"``
and its range key ``update_time``, a fixed-width UTC string
(``2026-01-31T12:00:00.000000+0000``) that sorts lexically in time order. The shard
suffix (``zlib.crc32(task_id) % n_shards``) splits a hot status over several GSI
partitions; readers fan out over all shards and merge.
"""

from __future__ import annotations

from typing import Any

TABLE_HASH_KEY = "pk"
GSI_NAME = "status-update_time-index"
GSI_HASH_KEY = "status_key"
GSI_RANGE_KEY = "update_time"
TTL_ATTRIBUTE = "expire_at"
KEY_SEPARATOR = "#"


def terraform_schema() -> dict[str, Any]:
    """The table definition in CreateTable terms, so a Terraform module can be checked against it.

    The GSI projects ALL attributes: a status query returns whole tasks (errors, data,
    lease) without a second GetItem per task.
    """
    return {
        "KeySchema": [{"AttributeName": TABLE_HASH_KEY, "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": TABLE_HASH_KEY, "AttributeType": "S"},
            {"AttributeName": GSI_HASH_KEY, "AttributeType": "S"},
            {"AttributeName": GSI_RANGE_KEY, "AttributeType": "S"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": GSI_NAME,
                "KeySchema": [
                    {"AttributeName": GSI_HASH_KEY, "KeyType": "HASH"},
                    {"AttributeName": GSI_RANGE_KEY, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
        "TimeToLiveSpecification": {"AttributeName": TTL_ATTRIBUTE, "Enabled": True},
    }
