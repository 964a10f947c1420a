"""Execution names derived from request ids: valid, unique per request id, readable.

Step Functions names are 1-80 characters and may not contain whitespace, brackets,
wildcards, ``" # % \\ ^ | ~ ` $ & , ; : /`` or control characters; a Standard
execution name stays taken for 90 days after the execution closes. The name is a
sanitized prefix of the request id (for people reading the console) plus 32 hex
digits of its SHA-256 (so two request ids that sanitize alike never collide).
"""

from __future__ import annotations

import hashlib
import re

PREFIX_LENGTH = 40
HASH_LENGTH = 32
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def execution_name(request_id: str) -> str:
    """The execution name for a request id: same id, same name; different ids, different names."""
    if not isinstance(request_id, str) or not request_id:
        raise ValueError("request_id must be a non-empty string")
    digest = hashlib.sha256(request_id.encode("utf-8")).hexdigest()[:HASH_LENGTH]
    prefix = _UNSAFE.sub("_", request_id)[:PREFIX_LENGTH].strip("_-")
    return f"{prefix}-{digest}" if prefix else digest


def execution_arn(state_machine_arn: str, name: str) -> str:
    """The ARN the execution ``name`` of a Standard state machine gets."""
    head, marker, machine = state_machine_arn.rpartition(":stateMachine:")
    if not marker or not machine:
        raise ValueError(f"{state_machine_arn!r} is not a state machine ARN")
    return f"{head}:execution:{machine}:{name}"
