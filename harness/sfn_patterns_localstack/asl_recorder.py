"""Record every state machine definition LocalStack accepts, for asl-validator.

LocalStack's parser accepts definitions that AWS rejects (a ``Next`` that names no
state, for one), so the test session also checks what was really deployed with
asl-validator, the checker the Serverless Framework's Step Functions plugin runs
(:mod:`sfn_patterns_localstack.asl_validation`). The most faithful list of "every
definition the modules render, for every strategy and option the tests use" is the one
LocalStack received: this patch writes each definition that a successful
``CreateStateMachine`` or ``UpdateStateMachine`` carried into the directory named by
``SFN_PATTERNS_RECORD_ASL`` (nothing is patched when it is unset), one file per state
machine name and definition text::

    <name>.<sha256 of the definition, 16 hex digits>.json
    {"name": ..., "operation": "CreateStateMachine", "definition": "<the text received>"}

The file is written before LocalStack answers, so it exists once the caller's request
(a ``terraform apply``, a boto3 call) has returned.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from pathlib import Path

LOG = logging.getLogger(__name__)
ENV = "SFN_PATTERNS_RECORD_ASL"


def record(directory: Path, name: str, operation: str, definition: str) -> Path:
    """Write one received definition into ``directory`` (atomically; same text, same file)."""
    digest = hashlib.sha256(definition.encode()).hexdigest()[:16]
    target = directory / f"{name}.{digest}.json"
    if not target.exists():
        directory.mkdir(parents=True, exist_ok=True)
        body = {"name": name, "operation": operation, "definition": definition}
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(body))
        tmp.replace(target)
    return target


def _safe_record(directory: Path, name: str, operation: str, definition: str | None) -> None:
    if not definition:
        return
    try:
        record(directory, name, operation, definition)
    except OSError:  # never fail the emulated API call over the recording
        LOG.exception("sfn-patterns could not record the definition of %s", name)


def apply() -> bool:
    """Patch LocalStack's Step Functions provider when SFN_PATTERNS_RECORD_ASL is set."""
    where = os.environ.get(ENV)
    if not where:
        return False
    try:
        from localstack.services.stepfunctions.provider import StepFunctionsProvider
    except ImportError:
        return False
    if getattr(StepFunctionsProvider.create_state_machine, "_sfnp_recorded", False):
        return True
    directory = Path(where)
    original_create = StepFunctionsProvider.create_state_machine
    original_update = StepFunctionsProvider.update_state_machine

    @functools.wraps(original_create)
    def create_state_machine(self, context, request, **kwargs):
        response = original_create(self, context, request, **kwargs)
        _safe_record(directory, request["name"], "CreateStateMachine", request.get("definition"))
        return response

    @functools.wraps(original_update)
    def update_state_machine(self, context, state_machine_arn, definition=None, **kwargs):
        response = original_update(
            self, context, state_machine_arn=state_machine_arn, definition=definition, **kwargs
        )
        name = state_machine_arn.rsplit(":", 1)[-1]
        _safe_record(directory, name, "UpdateStateMachine", definition)
        return response

    create_state_machine._sfnp_recorded = True  # type: ignore[attr-defined]
    StepFunctionsProvider.create_state_machine = create_state_machine
    StepFunctionsProvider.update_state_machine = update_state_machine
    return True
