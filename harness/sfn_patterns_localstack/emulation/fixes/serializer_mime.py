"""LocalStack's serializers pick a response's content type once per distinct request header.

Every response LocalStack 4.14.0 serializes first negotiates its content type:
``ResponseSerializer._get_mime_type`` (``localstack.aws.protocol.serializer``, the same
as 4.9.2's, overridden by no subclass) parses the request's ``Accept`` header (or its
``Content-Type``) into a werkzeug ``MIMEAccept`` and matches it against the
serializer's supported types: 4.5 % of the emulator's time on DynamoDB GetItems
(``py-spy --gil``, on 4.9.2). The answer depends only on the serializer class and those
two header values, and a client sends the same ones on every call, so it is kept per
(class, Accept, Content-Type). A header value never seen before is negotiated by
LocalStack's own code, exactly as before. AWS has nothing to emulate here: only the
emulator's CPU changes.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

LOG = logging.getLogger(__name__)
# Distinct header combinations are few (a handful of SDKs and protocols); the bound
# only guards against a client sending a new Accept value on every call.
MAX_KEYS = 256


def apply() -> bool:
    """Patch LocalStack's response serializer once; False if it is not where expected."""
    try:
        from localstack.aws.protocol import serializer
    except ImportError:
        return False
    base = serializer.ResponseSerializer
    original = getattr(base, "_get_mime_type", None)
    if original is None:
        LOG.warning("sfn-patterns mime type patch not applied: no _get_mime_type")
        return False
    if getattr(original, "_sfnp_patched", False):
        return True
    chosen: dict[tuple[type, str | None, str | None], str] = {}
    lock = threading.Lock()

    @functools.wraps(original)
    def _get_mime_type(self: Any, headers: Any) -> str:
        if headers:
            key = (type(self), headers.get("Accept"), headers.get("Content-Type"))
        else:
            key = (type(self), None, None)
        mime_type = chosen.get(key)
        if mime_type is None:
            mime_type = original(self, headers)
            with lock:
                if len(chosen) < MAX_KEYS:
                    chosen[key] = mime_type
        return mime_type

    _get_mime_type._sfnp_patched = True  # type: ignore[attr-defined]
    base._get_mime_type = _get_mime_type
    return True
