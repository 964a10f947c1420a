"""What ``terraform init`` would leave in the checkout, for tests that run Terraform.

``init`` writes ``.terraform.lock.hcl`` into the directory it runs in (and
``.terraform/`` unless TF_DATA_DIR moves it). In a long-lived checkout a lock file left
in modules/<m>/ pins the provider's hashes, so ``init`` fails once the provider is
rebuilt. Tests therefore run Terraform in a staging tree of links (the harness's
``stage``) and check with :func:`terraform_files` that the checkout did not change.
"""

from __future__ import annotations

from sfn_patterns_localstack.terraform.workspace import REPO_ROOT

NAMES = (".terraform.lock.hcl", ".terraform")


def terraform_files() -> dict[str, int]:
    """Lock files and data directories in the root, modules/* and examples/*, with mtimes."""
    directories = [
        REPO_ROOT,
        *(p for p in (REPO_ROOT / "modules").iterdir() if p.is_dir()),
        *(p for p in (REPO_ROOT / "examples").iterdir() if p.is_dir()),
    ]
    return {
        str((directory / name).relative_to(REPO_ROOT)): (directory / name).stat().st_mtime_ns
        for directory in directories
        for name in NAMES
        if (directory / name).exists()
    }
