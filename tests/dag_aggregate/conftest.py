"""dag-aggregate test configuration."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Register ``slow``: a LocalStack test of a minute or more (deselect with -m 'not slow')."""
    config.addinivalue_line("markers", "slow: takes a minute or more on LocalStack")
