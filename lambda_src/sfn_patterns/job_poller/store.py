"""Per-execution metadata (the start time) in S3 or DynamoDB, keyed by the execution ARN.

The key is the md5 of the execution ARN (fixed length, no ``:`` or ``/`` from the
ARN in S3 keys or DynamoDB keys) plus the poller name, so several poll loops in
one execution keep separate start times.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Protocol

from sfn_patterns import clients

S3_PREFIX = "job-poller"


def execution_key(execution_arn: str) -> str:
    """The md5 hex digest of the execution ARN (the metadata's key)."""
    return hashlib.md5(execution_arn.encode("utf-8"), usedforsecurity=False).hexdigest()


class MetadataStore(Protocol):
    """A small JSON document store: one document per (execution key, poller, name)."""

    def put(self, key: str, poller: str, name: str, document: dict[str, Any]) -> None:
        """Write (or overwrite) one document."""

    def get(self, key: str, poller: str, name: str) -> dict[str, Any] | None:
        """Read one document; None when it does not exist."""


class S3Store:
    """Documents as ``job-poller/<md5>/<poller>/<name>.json`` objects (SSE applies)."""

    def __init__(self, bucket: str, client: Any = None) -> None:
        self.bucket = bucket
        self.client = client or clients.client("s3")

    @staticmethod
    def object_key(key: str, poller: str, name: str) -> str:
        """The S3 key of one document."""
        return f"{S3_PREFIX}/{key}/{poller}/{name}.json"

    def put(self, key: str, poller: str, name: str, document: dict[str, Any]) -> None:
        """Write one document as JSON."""
        self.client.put_object(
            Bucket=self.bucket,
            Key=self.object_key(key, poller, name),
            Body=json.dumps(document).encode("utf-8"),
            ContentType="application/json",
        )

    def get(self, key: str, poller: str, name: str) -> dict[str, Any] | None:
        """Read one document; a missing object is None, other errors propagate."""
        try:
            body = self.client.get_object(
                Bucket=self.bucket, Key=self.object_key(key, poller, name)
            )["Body"].read()
        except self.client.exceptions.NoSuchKey:
            return None
        return json.loads(body)


class DynamoStore:
    """Documents as items ``pk = <md5>#<poller>``, ``sk = <name>``, ``doc`` = JSON string.

    A TTL attribute (``expires_at``) lets DynamoDB delete metadata of old executions.
    """

    def __init__(self, table: str, client: Any = None, ttl_seconds: int = 7 * 86400) -> None:
        self.table = table
        self.client = client or clients.client("dynamodb")
        self.ttl_seconds = ttl_seconds

    def put(self, key: str, poller: str, name: str, document: dict[str, Any]) -> None:
        """Write one document with an expiry."""
        import time

        self.client.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": f"{key}#{poller}"},
                "sk": {"S": name},
                "doc": {"S": json.dumps(document)},
                "expires_at": {"N": str(int(time.time()) + self.ttl_seconds)},
            },
        )

    def get(self, key: str, poller: str, name: str) -> dict[str, Any] | None:
        """Read one document with a strongly consistent read (status must not go stale)."""
        item = self.client.get_item(
            TableName=self.table,
            Key={"pk": {"S": f"{key}#{poller}"}, "sk": {"S": name}},
            ConsistentRead=True,
        ).get("Item")
        return json.loads(item["doc"]["S"]) if item else None


def from_env(environ: dict[str, str] | None = None) -> MetadataStore | None:
    """The store the Terraform module configured (METADATA_STORE = s3 | dynamodb | none)."""
    env = os.environ if environ is None else environ
    kind = env.get("METADATA_STORE", "none")
    if kind == "s3":
        return S3Store(env["METADATA_BUCKET"])
    if kind == "dynamodb":
        return DynamoStore(env["METADATA_TABLE"])
    if kind == "none":
        return None
    raise ValueError(f"METADATA_STORE must be s3, dynamodb or none, not {kind!r}")
