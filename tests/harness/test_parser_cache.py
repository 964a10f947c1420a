"""A service's request parser is built once, however many requests ask for it at once.

fixes.parser_cache: LocalStack's ``functools.cache`` let every caller that arrived
before the first build finished build its own parser (1,000 Run Job invokes compiled
Lambda's URL rules 1,000 times). The cache in front builds each once, and the parser
is LocalStack's own.
"""

from __future__ import annotations

import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from sfn_patterns_localstack.emulation.fixes import parser_cache

CALLERS = 24


def _herd(create) -> tuple[int, set[int]]:
    """CALLERS threads ask ``create`` for one key at once: builds, and distinct results."""
    builds = []
    start = threading.Barrier(CALLERS)

    def build(service, protocol=None):
        builds.append(service)
        time.sleep(0.05)  # a REST parser's rule compilation, roughly
        return object()

    cached = create(build)

    def ask(_: int) -> int:
        start.wait()
        return id(cached("lambda", None))

    with ThreadPoolExecutor(CALLERS) as pool:
        results = set(pool.map(ask, range(CALLERS)))
    return len(builds), results


def test_localstack_s_own_cache_builds_once_per_concurrent_caller() -> None:
    builds, results = _herd(functools.cache)
    assert builds > 1 and len(results) > 1  # the herd the fix is for


def test_the_single_build_cache_builds_once_and_hands_everyone_that_parser() -> None:
    builds, results = _herd(parser_cache.single_build)
    assert builds == 1 and len(results) == 1


def test_localstack_parses_through_the_single_build_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib

    from localstack.aws.spec import load_service

    modules = [importlib.import_module(name) for name in parser_cache.CALLERS]
    for module in modules:  # put back after the test
        monkeypatch.setattr(module, "create_parser", module.create_parser)
    assert parser_cache.apply() is True
    assert parser_cache.apply() is True  # once: not a cache in front of a cache
    patched = modules[0].create_parser
    assert getattr(patched, "_sfnp_single_build", False)
    assert not getattr(patched.__wrapped__, "_sfnp_single_build", False)
    assert all(module.create_parser is patched for module in modules)
    model = load_service("lambda")
    built = patched(model)
    assert built is patched(model)
    assert type(built) is type(patched.__wrapped__(model))
    assert built.service is model
