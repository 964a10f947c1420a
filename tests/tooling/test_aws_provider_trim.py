"""scripts/aws_provider_trim.py: the AWS provider is built with exactly the services in use."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "aws_provider_trim", REPO / "scripts/aws_provider_trim.py"
)
trim = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = trim  # dataclasses look their module up
spec.loader.exec_module(trim)


def fake_provider(tmp_path: Path, packages: dict[str, list[str]]) -> Path:
    src = tmp_path / "src"
    for package, types in packages.items():
        gen = src / "internal/service" / package / "service_package_gen.go"
        gen.parent.mkdir(parents=True)
        gen.write_text("".join(f'\t\t\tTypeName: "{t}",\n' for t in types))
    return src


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_types_come_from_resource_data_and_ephemeral_blocks_only(tmp_path: Path) -> None:
    write(
        tmp_path / "modules/a/main.tf",
        'resource "aws_sqs_queue" "q" {}\ndata "aws_region" "r" {}\n'
        'ephemeral "aws_kms_secrets" "s" {}\nresource "local_file" "f" {}\n'
        '# resource "aws_commented" is still a block line only when it starts a line\n',
    )
    write(tmp_path / "modules/a/.terraform/modules/x/main.tf", 'resource "aws_ec2_host" "h" {}\n')
    assert trim.used_types(tmp_path) == {"aws_sqs_queue", "aws_region", "aws_kms_secrets"}


def test_plan_maps_every_type_to_its_package_plus_meta_and_sts(tmp_path: Path) -> None:
    write(
        tmp_path / "root/main.tf",
        'resource "aws_sqs_queue" "q" {}\nresource "aws_sfn_activity" "a" {}\n',
    )
    src = fake_provider(
        tmp_path,
        {
            "sqs": ["aws_sqs_queue"],
            "sfn": ["aws_sfn_activity"],
            "ec2": ["aws_instance"],
            "meta": ["aws_region"],
            "sts": ["aws_caller_identity"],
        },
    )
    plan = trim.plan(tmp_path / "root", src)
    assert plan.full is False
    assert plan.packages == ("meta", "sfn", "sqs", "sts")
    assert re.fullmatch(r"[0-9a-f]{12}", plan.digest())


def test_a_type_no_package_defines_falls_back_to_the_full_build(tmp_path: Path) -> None:
    write(
        tmp_path / "root/main.tf",
        'resource "aws_sqs_queue" "q" {}\nresource "aws_brand_new" "n" {}\n',
    )
    src = fake_provider(tmp_path, {"sqs": ["aws_sqs_queue"]})
    plan = trim.plan(tmp_path / "root", src)
    assert plan.full is True
    assert plan.digest() == f"full-{trim.POLL_CAP_ID}"
    assert "aws_brand_new" in plan.describe()


def test_the_cache_key_names_the_patch_so_a_new_patch_rebuilds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "root/main.tf", 'resource "aws_sqs_queue" "q" {}\n')
    src = fake_provider(tmp_path, {"sqs": ["aws_sqs_queue"]})
    before = trim.plan(tmp_path / "root", src).digest()
    monkeypatch.setattr(trim, "POLL_CAP_ID", "pollcap-next")
    assert trim.plan(tmp_path / "root", src).digest() != before
    assert trim.plan(tmp_path / "root", src, full=True).digest() == "full-pollcap-next"


SLEEP_FUNC = (
    "func (r *Loop) sleep(ctx context.Context, d time.Duration) {\n"
    "\tif d == 0 {\n\t\treturn\n\t}\n}\n"
)


def test_the_poll_cap_goes_first_in_loop_sleep_and_brings_its_file(tmp_path: Path) -> None:
    write(tmp_path / trim.BACKOFF_GO, "package backoff\n\n" + SLEEP_FUNC)
    trim.patch_poll_cap(tmp_path)
    patched = (tmp_path / trim.BACKOFF_GO).read_text()
    assert trim.SLEEP_ANCHOR + "\td = capPollDelay(d)\n\tif d == 0 {" in patched
    added = (tmp_path / trim.POLL_CAP_FILE).read_text()
    assert "func capPollDelay(d time.Duration) time.Duration" in added
    assert f'os.Getenv("{trim.POLL_CAP_ENV}")' in added


def test_a_changed_loop_sleep_stops_the_build_naming_the_file(tmp_path: Path) -> None:
    write(tmp_path / trim.BACKOFF_GO, "package backoff\n\nfunc (r *Loop) wait() {}\n")
    with pytest.raises(SystemExit, match=r"backoff\.go.*update patch_poll_cap"):
        trim.patch_poll_cap(tmp_path)


def test_service_package_list_keeps_only_the_chosen_imports_and_calls() -> None:
    text = (
        'import (\n\t"context"\n'
        f'\t"{trim.SERVICE_IMPORT}ec2"\n\t"{trim.SERVICE_IMPORT}sqs"\n)\n'
        "\tv := []conns.ServicePackage{\n"
        "\t\tec2.ServicePackage(ctx),\n\t\tsqs.ServicePackage(ctx),\n\t}\n"
    )
    out = trim.trim_service_packages(text, {"sqs"})
    assert "ec2" not in out
    assert f'"{trim.SERVICE_IMPORT}sqs"' in out and "sqs.ServicePackage(ctx)," in out
    assert '"context"' in out


def test_unused_client_accessors_and_their_imports_are_dropped() -> None:
    text = (
        'package conns\n\nimport (\n\t"context"\n\n'
        '\t"github.com/aws/aws-sdk-go-v2/service/ec2"\n'
        '\t"github.com/aws/aws-sdk-go-v2/service/sqs"\n'
        '\tcloudwatchlogs "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"\n)\n\n'
        "func (c *AWSClient) EC2Client(ctx context.Context) *ec2.Client {\n\treturn nil\n}\n\n"
        "func (c *AWSClient) LogsClient(ctx context.Context) *cloudwatchlogs.Client {\n"
        "\treturn nil\n}\n\n"
        "func (c *AWSClient) SQSClient(ctx context.Context) *sqs.Client {\n\treturn nil\n}\n"
    )
    out = trim.trim_awsclient(text, {"SQSClient", "LogsClient"})
    assert "EC2Client" not in out and "service/ec2" not in out
    assert "SQSClient" in out and "service/sqs" in out
    assert "LogsClient" in out and "service/cloudwatchlogs" in out


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain (bootstrap)")
def test_this_repository_builds_a_trimmed_provider_from_the_pinned_source() -> None:
    """Every type the modules, examples and tests use is found in the pinned provider."""
    build = (REPO / "scripts/build-providers.sh").read_text()
    module, version = re.search(r'"aws \S+ (\S+) (\S+) ', build).groups()
    proc = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    src = Path(json.loads(proc.stdout)["Dir"])
    plan = trim.plan(REPO, src)
    assert not plan.full, plan.describe()
    # The poll cap's anchor is in the pinned source exactly once.
    assert (src / trim.BACKOFF_GO).read_text().count(trim.SLEEP_ANCHOR) == 1
    assert {"sfn", "lambda", "dynamodb", "iam", "meta", "sts"} <= set(plan.packages)
    assert len(plan.packages) < 30
