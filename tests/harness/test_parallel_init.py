"""Terraform runs in parallel (xdist workers, benchmarks, the demo) without racing.

Terraform's plugin cache is not safe for concurrent ``init``: two inits filling an
empty cache at once fail with "failed to create directory ... file exists". The
bootstrap's CLI configuration therefore has no ``plugin_cache_dir``; each init links
the provider from the unpacked mirror instead, and each Workspace has its own data
directory and lock file.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform.workspace import REPO_ROOT, Workspace, terraform_binary

pytestmark = pytest.mark.terraform


def cli_config() -> str:
    wrapper = Path(terraform_binary()).read_text()
    match = re.search(r'TF_CLI_CONFIG_FILE="([^"]+)"', wrapper)
    assert match, "the project's terraform wrapper names its CLI configuration"
    return Path(match.group(1)).read_text()


def test_cli_configuration_has_no_shared_plugin_cache() -> None:
    assert not re.search(r"^\s*plugin_cache_dir", cli_config(), re.MULTILINE)


def test_several_inits_of_one_example_at_once_all_succeed(tmp_path: Path) -> None:
    workspaces = [
        Workspace(REPO_ROOT / "examples/job-poller", "http://127.0.0.1:9", tmp_path / f"w{i}")
        for i in range(4)
    ]
    try:
        with ThreadPoolExecutor(len(workspaces)) as pool:
            list(pool.map(lambda w: w.init(), workspaces))  # raises on any failed init
    finally:
        for workspace in workspaces:
            workspace.close()
    for workspace in workspaces:
        providers = workspace.scratch_dir / ".terraform/providers"
        provider = providers / "registry.terraform.io/hashicorp/aws"
        binaries = list(provider.glob("*/*/terraform-provider-aws*"))
        assert len(binaries) == 1, binaries
