"""Render ``${name}``-only templates exactly as Terraform's ``templatefile`` does.

The ASL templates in ``templates/<pattern>/*.tftpl`` are rendered by Terraform in
the modules, and by Python where a pattern composes another's fragment (the
dag-aggregate planner embeds the job-poller's poll loop) and in unit tests. Both
must give the same text, so the templates use plain interpolation only (no
``%{}`` directives) and this renderer refuses anything else.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any


def templates_root() -> Path:
    """``templates/`` as package data: ``templates/<pattern>/`` of the repository.

    In a checkout (and an editable install) ``sfn_patterns_cli/templates`` is a link
    to the repository's ``templates/``, the files the Terraform modules read; a built
    wheel carries a copy, so an installed CLI renders the same definitions.
    """
    return Path(str(resources.files("sfn_patterns_cli") / "templates"))


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render_tftpl(path: Path, variables: dict[str, Any]) -> str:
    """Render a template: strings are inserted verbatim, other values as JSON.

    A template therefore writes ``"${arn}"`` for strings and ``${seconds}`` for
    numbers or JSON snippets. A placeholder without a value raises KeyError, as
    Terraform fails the plan.
    """
    text = Path(path).read_text()
    if "%{" in text:
        raise ValueError(f"{path}: template directives (%{{...}}) are not supported here")

    def value(match: re.Match) -> str:
        item = variables[match.group(1)]
        return item if isinstance(item, str) else json.dumps(item)

    return _PLACEHOLDER.sub(value, text)


def retry_policy() -> dict[str, Any]:
    """``templates/retry/policy.json``: the errors every pattern's Tasks retry.

    The one list the modules (``jsondecode(file(...))``) and the planner's templates
    take the retriers AWS recommends from: Lambda's transient errors for every
    ``lambda:invoke`` and each integration's throttling errors.
    """
    return json.loads((templates_root() / "retry" / "policy.json").read_text())


def retrier(errors: list[str], budget: dict[str, float]) -> dict[str, Any]:
    """One ASL retrier: ``errors`` with exponential backoff and full jitter.

    ``budget`` is the render options' ``{"interval", "backoff", "attempts", "max_delay"}``.
    """
    return {
        "ErrorEquals": list(errors),
        "IntervalSeconds": budget["interval"],
        "BackoffRate": budget["backoff"],
        "MaxAttempts": budget["attempts"],
        "MaxDelaySeconds": budget["max_delay"],
        "JitterStrategy": "FULL",
    }
