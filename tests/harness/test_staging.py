"""The staging tree: examples are applied from links, so the checkout never changes."""

from __future__ import annotations

from pathlib import Path

from sfn_patterns_localstack.terraform.workspace import OVERRIDE_NAME, REPO_ROOT, stage


def test_stage_links_the_tree_and_keeps_the_override_out_of_the_checkout(tmp_path: Path) -> None:
    source = REPO_ROOT / "examples" / "complete"
    example = stage(source, tmp_path)
    assert example == stage(source, tmp_path)  # idempotent
    assert example.is_dir() and not example.is_symlink()
    assert example == (tmp_path / "tree" / "examples" / "complete").resolve()
    assert (example / "main.tf").resolve() == source / "main.tf"
    assert (example / "../../modules").resolve() == REPO_ROOT / "modules"
    assert (example / "../dag-aggregate/sql").resolve() == REPO_ROOT / "examples/dag-aggregate/sql"
    assert not any(p.name.startswith(".") for p in example.iterdir())
    (example / OVERRIDE_NAME).write_text("# test\n")
    assert not (source / OVERRIDE_NAME).exists()


def test_nested_configurations_keep_their_relative_paths(tmp_path: Path) -> None:
    source = REPO_ROOT / "tests" / "job_poller" / "two_pollers"
    staged = stage(source, tmp_path)
    assert staged.relative_to(tmp_path.resolve() / "tree") == Path("tests/job_poller/two_pollers")
    assert (staged / "../../../modules").resolve() == REPO_ROOT / "modules"
    assert (staged / "../helpers.py").resolve() == REPO_ROOT / "tests/job_poller/helpers.py"


def test_directories_outside_the_checkout_are_used_in_place(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    assert stage(config, tmp_path / "scratch") == config.resolve()
