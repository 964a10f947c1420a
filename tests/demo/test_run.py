"""demo.run's failure handling, with Terraform replaced by a fake (no LocalStack)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.demo import run as demo
from sfn_patterns_localstack.terraform.workspace import TerraformError


class FailingApply:
    def __init__(self) -> None:
        self.closed = False
        self.destroyed = False

    def init(self) -> None:
        pass

    def apply(self, variables: dict[str, Any]) -> None:
        raise TerraformError("terraform apply failed: boom")

    def destroy(self, variables: dict[str, Any]) -> None:
        self.destroyed = True

    def close(self) -> None:
        self.closed = True


def test_a_failed_apply_exits_1_with_a_message_and_keeps_the_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fake = FailingApply()
    monkeypatch.setattr(demo, "workspace", lambda endpoint, work_dir, log=None: fake)
    code = demo.run(endpoint="http://127.0.0.1:9", report_path=tmp_path / "r.html")
    assert code == 1
    assert fake.closed and not fake.destroyed
    err = capsys.readouterr().err
    assert "error: terraform apply failed: boom" in err
    kept = Path(err.split("Terraform state kept in ")[1].split()[0])
    assert kept.is_dir()  # the temporary work dir survives an error
    shutil.rmtree(kept)
    assert not (tmp_path / "r.html").exists()
