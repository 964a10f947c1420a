"""LocalStack's service catalog index is built once per LocalStack and botocore version.

On its first request, LocalStack 4.14.0 loads its service catalog (which service an
incoming request is for) from an index file, ``service-catalog-<localstack>-<botocore>.dill``
(``spec.get_service_catalog``, the same as 4.9.2's): from its static libs directory if
the file is there (it is not in the wheel), else from its cache directory, building it
there when it is missing (``spec.build_service_index_cache``) by loading the model of
every AWS service botocore knows. The harness gives each LocalStack a fresh directory
(server.start), so every LocalStack built it again: 4.8 CPU-seconds of the 13 LocalStack
spent on tests/job_poller/test_example.py (emulation/profiler.py, on 4.9.2). AWS has no
such start-up cost.

The index is a pure function of the two versions, which its file name carries, so it
is kept in the project's cache (``localstack-catalog/``): each LocalStack copies the
files found there into its cache directory before serving, and the first one to
build an index also copies it there (atomically: LocalStacks start in parallel).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

LOG = logging.getLogger(__name__)
PATTERN = "service-catalog-*.dill"


def shared_dir() -> Path:
    """Where the built indexes are kept across LocalStacks."""
    from sfn_patterns_localstack.server import cache_dir

    return cache_dir() / "localstack-catalog"


def seed(cache: Path, shared: Path) -> list[str]:
    """Copy the kept indexes LocalStack's cache directory lacks; their names."""
    copied = []
    for kept in sorted(shared.glob(PATTERN)):
        target = cache / kept.name
        if target.exists():
            continue
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kept, target)
        copied.append(kept.name)
    return copied


def keep(built: Path, shared: Path) -> None:
    """Copy a freshly built index into the shared directory (never half a file)."""
    shared.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".staging-", dir=shared)
    os.close(fd)
    try:
        shutil.copyfile(built, tmp)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; it is a cache like any other
        os.replace(tmp, shared / built.name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _keeping(build: Callable[[str], Any], shared: Path) -> Callable[[str], Any]:
    def build_service_index_cache(file_path: str) -> Any:
        index = build(file_path)
        try:
            keep(Path(file_path), shared)
        except OSError:
            LOG.warning("cannot keep the service catalog index in %s", shared, exc_info=True)
        return index

    build_service_index_cache._sfnp_patched = True  # type: ignore[attr-defined]
    return build_service_index_cache


def apply(shared: Path | None = None) -> bool:
    """Seed LocalStack's cache and keep what it builds; False on another LocalStack version."""
    try:
        from localstack import config, version
        from localstack.aws import spec
    except ImportError:
        return False
    if version.__version__ != LOCALSTACK_VERSION or not callable(
        getattr(spec, "build_service_index_cache", None)
    ):
        LOG.warning("sfn-patterns catalog cache not applied (localstack %s)", version.__version__)
        return False
    if getattr(spec.build_service_index_cache, "_sfnp_patched", False):
        return True
    shared = shared or shared_dir()
    try:
        seed(Path(config.dirs.cache), shared)
    except OSError:
        LOG.warning("cannot seed the service catalog index from %s", shared, exc_info=True)
    spec.build_service_index_cache = _keeping(spec.build_service_index_cache, shared)
    return True
