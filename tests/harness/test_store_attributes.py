"""store_attributes (fixes/): a store's shared attribute is made once, whichever thread asks first.

Plain LocalStack 4.14.0 makes a cross-region or cross-account store attribute (CloudWatch's
tags, for one) on first access with a check, then a set: two threads that reach a fresh
store at once each make one, and what the first wrote into its copy is lost.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from localstack.services import stores

from sfn_patterns_localstack.emulation.fixes import store_attributes


class SlowTags:
    """A default that takes a while to make, as a first access may (a thread switch)."""

    def __init__(self) -> None:
        time.sleep(0.05)
        self.tags: dict[str, str] = {}


def _unpatched(descriptor: type) -> Any:
    get = descriptor.__dict__["__get__"]
    return getattr(get, "_sfnp_original", get)


def _race(get: Any, container: str) -> dict[str, str]:
    """Two threads tag a fresh store 10 ms apart, through ``get``; the tags it then holds."""

    class Attribute(
        stores.CrossRegionAttribute if container == "_global" else stores.CrossAccountAttribute
    ):
        __get__ = get

    class Store:
        TAGS = Attribute(default=SlowTags)

        def __init__(self) -> None:
            setattr(self, container, {})

    store = Store()

    def tag(key: str) -> None:
        store.TAGS.tags[key] = "v"

    first = threading.Thread(target=tag, args=("first",))
    second = threading.Thread(target=tag, args=("second",))
    first.start()
    time.sleep(0.01)
    second.start()
    first.join()
    second.join()
    return store.TAGS.tags


def test_plain_localstack_loses_the_first_threads_write() -> None:
    """The premise: without the patch one of the two tags is gone."""
    assert _race(_unpatched(stores.CrossRegionAttribute), "_global") == {"second": "v"}
    assert _race(_unpatched(stores.CrossAccountAttribute), "_universal") == {"second": "v"}


def test_with_the_patch_both_writes_stay() -> None:
    assert store_attributes.apply() is True
    assert store_attributes.apply() is True  # once
    region_get = stores.CrossRegionAttribute.__dict__["__get__"]
    account_get = stores.CrossAccountAttribute.__dict__["__get__"]
    assert _race(region_get, "_global") == {"first": "v", "second": "v"}
    assert _race(account_get, "_universal") == {"first": "v", "second": "v"}
