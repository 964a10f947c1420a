"""The documentation site fails its build on what would mislead a reader, and the
repository's documents keep the shape a new user reads them in.

``make docs`` (run by ``make fast-checks``, so by ``make test``) builds the real site
with ``mkdocs build --strict``. These tests plant, in a copy of the repository, the
mistakes that build must refuse: a broken link, a page left out of the navigation, a
code snippet whose file is gone. They also check what no build checks: one benchmark
page per ``scripts/bench_*.py`` with its command, a README that reads in five minutes,
and module READMEs in the terraform-aws-modules order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a build never reads: the virtualenv, outputs, caches, git's own files.
NOT_COPIED = shutil.ignore_patterns(
    ".venv", "build", ".build", ".git", ".terraform", "__pycache__", "node_modules", "*.egg-info"
)
PATTERNS = ("job-poller", "sqs-throttle", "semaphore", "dag-aggregate", "status-table")


# A test or file the docs name: `tests/x/test_y.py::test_z`, `scripts/bench_x.py`, ...
REFERENCE = re.compile(
    r"\b((?:tests|scripts|harness|lambda_src|cli|modules|examples)/[\w./-]+\.(?:py|tf|sh|md))"
    r"(?:::(\w+))?"
)
FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```", re.S | re.M)


def missing_references(text: str) -> list[str]:
    """The repository files (and test functions) ``text`` names that do not exist, outside
    code blocks (whose sample output may name made-up paths)."""
    missing = []
    for path, test in REFERENCE.findall(FENCE.sub("", text)):
        if "*" in path or "<" in path:
            continue
        target = ROOT / path
        if not target.is_file():
            missing.append(path)
        elif test and not re.search(rf"def {test}\b", target.read_text()):
            missing.append(f"{path}::{test}")
    return missing


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The repository's files, as a fresh clone has them, in a directory of their own."""
    target = tmp_path / "repo"
    shutil.copytree(ROOT, target, ignore=NOT_COPIED, symlinks=True)
    return target


def build(repo: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``repo`` as ``make docs`` runs it (not ``--quiet``:
    quiet, mkdocs drops its warnings before strict mode counts them, and passes)."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict"],
        cwd=repo,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_a_broken_link_and_a_page_left_out_of_the_nav_fail_the_build(copy: Path) -> None:
    page = copy / "docs" / "capacity.md"
    page.write_text(page.read_text() + "\nSee [the old guide](patterns/no-such-page.md).\n")
    (copy / "docs" / "orphan.md").write_text("# A page nobody links to\n")
    result = build(copy)
    assert result.returncode != 0, result.stdout + result.stderr
    log = result.stdout + result.stderr
    assert "capacity.md" in log and "patterns/no-such-page.md" in log, log[-3000:]
    assert "orphan.md" in log, log[-3000:]


def test_a_snippet_whose_file_is_gone_fails_the_build(copy: Path) -> None:
    """Code is included from files the tests exercise; a moved file must not leave an
    empty code block behind."""
    (copy / "tests" / "tooling" / "localstack_root" / "main.tf").unlink()
    result = build(copy)
    assert result.returncode != 0, result.stdout + result.stderr
    log = result.stdout + result.stderr
    assert "localstack_root/main.tf" in log, log[-3000:]


def test_every_benchmark_script_has_a_page_with_its_command() -> None:
    pages = {p.name: p.read_text() for p in (ROOT / "docs" / "benchmarks").glob("*.md")}
    scripts = sorted((ROOT / "scripts").glob("bench_*.py"))
    assert scripts, "no scripts/bench_*.py found"
    for script in scripts:
        command = f"scripts/{script.name}"
        holders = [name for name, text in pages.items() if "```bash\n" in text and command in text]
        assert holders, f"no page in docs/benchmarks/ shows the command of {command}"
    nav = (ROOT / "mkdocs.yml").read_text()
    for name in pages:
        assert f"benchmarks/{name}" in nav, f"docs/benchmarks/{name} is not in mkdocs.yml's nav"


def test_the_files_and_tests_the_docs_name_exist() -> None:
    pages = [
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted(ROOT.glob("modules/*/README.md")),
        *sorted(ROOT.glob("examples/*/README.md")),
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "harness" / "README.md",
    ]
    missing = {
        str(page.relative_to(ROOT)): found
        for page in pages
        if page.name not in ("CHANGELOG.md", "UPGRADING.md")  # included, history
        and (found := missing_references(page.read_text()))
    }
    assert not missing, missing


def test_a_renamed_test_or_file_is_reported() -> None:
    planted = (
        "Tested in `tests/tooling/test_docs_site.py::test_the_readme_reads_in_five_minutes`,"
        " `tests/tooling/test_docs_site.py::test_that_was_renamed` and"
        " `scripts/bench_gone.py`; `tests/semaphore/test_*.py` is a glob."
    )
    assert missing_references(planted) == [
        "tests/tooling/test_docs_site.py::test_that_was_renamed",
        "scripts/bench_gone.py",
    ]


def test_the_readme_reads_in_five_minutes() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300, "README.md is over 300 lines: move detail to docs/"
    for must in ("make demo", "make test", "?ref=v1.0.0", "endpoints", "escapes module package"):
        assert must in readme, f"README.md no longer says {must!r}"
    sources = re.findall(r'source\s*=\s*"([^"]+)"', readme)
    for pattern in PATTERNS:
        assert any(f"modules/{pattern}?ref=v1.0.0" in s for s in sources), pattern


def test_the_readmes_provider_block_is_the_validated_one() -> None:
    """The README's LocalStack provider block is pasted (the README is no site page);
    it must stay the block tests/tooling/localstack_root validates."""
    tested = (ROOT / "tests" / "tooling" / "localstack_root" / "main.tf").read_text()
    block = tested.split("# --8<-- [start:provider]\n")[1].split("# --8<-- [end:provider]")[0]
    readme = (ROOT / "README.md").read_text()
    assert f"```hcl\n{block}```" in readme, "README.md's provider block differs from the tested one"


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_module_readme_puts_usage_first_and_links_its_guide(pattern: str) -> None:
    """terraform-aws-modules' order: intro, Usage within 60 lines, examples, the guide,
    then the generated tables."""
    lines = (ROOT / "modules" / pattern / "README.md").read_text().splitlines()
    headings = [(n, line) for n, line in enumerate(lines, 1) if line.startswith("## ")]
    usage = next((n for n, line in headings if line == "## Usage"), None)
    assert usage is not None and usage <= 60, f"{pattern}: ## Usage at line {usage}"
    text = "\n".join(lines)
    guide = f"docs/patterns/{pattern}.md"
    assert guide in text, f"{pattern}'s README does not link {guide}"
    assert (ROOT / guide).is_file()
    order = [text.index(s) for s in ("## Usage", "## Examples", guide, "<!-- BEGIN_TF_DOCS -->")]
    assert order == sorted(order), f"{pattern}: Usage, Examples, guide, tables out of order"
