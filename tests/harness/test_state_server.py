"""Terraform's state goes through the harness's state server to the workspace's file.

Under the test suite the harness selects Terraform's ``http`` backend (state_server.py;
tests/conftest.py sets SFN_PATTERNS_TF_BACKEND): Terraform keeps the state in memory
during a command and sends it at the end, instead of rewriting the file after each
resource change. What must hold: the server keeps the same file the local backend would
(``Workspace.state()`` reads it), Terraform's own view (``terraform state pull``,
``terraform output``) is that file, a second Workspace on the same scratch directory
(even in another process, whose server has another port) runs without a new ``init``,
and without the variable the local backend stays the default (running Terraform by
hand in the staged directory after the Workspace's process has ended needs it).
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from sfn_patterns_localstack.terraform import state_server
from sfn_patterns_localstack.terraform.workspace import (
    OVERRIDE_NAME,
    STATE_BACKEND_ENV,
    TerraformError,
    Workspace,
)

FIXTURE = Path(__file__).resolve().parent / "state_backend"
# No command here reaches the AWS provider's endpoint: the fixture has no AWS resource.
NO_ENDPOINT = "http://127.0.0.1:9"


def request(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, method=method)) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_server_reads_writes_and_deletes_only_registered_files(tmp_path: Path) -> None:
    path = tmp_path / "terraform.tfstate"
    url = state_server.address_for(path)
    assert url.startswith("http://127.0.0.1:")
    assert request(url) == (404, b"")  # no state yet: Terraform starts empty

    assert request(url, "POST", b'{"serial": 1}')[0] == 200
    assert path.read_bytes() == b'{"serial": 1}'
    assert request(url) == (200, b'{"serial": 1}')
    assert request(url, "POST", b'{"serial": 2}')[0] == 200
    assert request(url) == (200, b'{"serial": 2}')
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no partial file left

    assert request(url, "DELETE")[0] == 200
    assert not path.exists()

    unknown = url.rsplit("/", 1)[0] + "/" + "0" * 32
    assert request(unknown, "POST", b"{}")[0] == 404
    assert request(url.rsplit("/state/", 1)[0] + "/elsewhere") == (404, b"")
    assert state_server.address_for(path) == url  # one address per file


@pytest.mark.terraform
def test_state_round_trips_through_the_http_backend(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(STATE_BACKEND_ENV, "http")
    workspace = Workspace(FIXTURE, NO_ENDPOINT, tmp_path)
    assert workspace.backend == "http"
    assert 'backend "http"' in (workspace.config_dir / OVERRIDE_NAME).read_text()
    try:
        workspace.init()
        assert workspace.state() == {}
        workspace.apply({"names": ["a", "b", "c"]})
        state = workspace.state()
        assert sorted(i["index_key"] for i in state["resources"][0]["instances"]) == [
            "a",
            "b",
            "c",
        ]
        shown = json.loads(workspace.run("output", "-json").stdout)
        assert workspace.outputs() == {name: spec["value"] for name, spec in shown.items()}
        assert workspace.outputs() == {"inputs": {"a": "a", "b": "b", "c": "c"}, "secret": "a,b,c"}
        pulled = json.loads(workspace.run("state", "pull").stdout)
        assert (pulled["lineage"], pulled["serial"]) == (state["lineage"], state["serial"])
        assert workspace.plan_exit_code({"names": ["a", "b", "c"]})[0] == 0

        # Another process (another server, another port), same scratch: no new init.
        script = (
            "import sys; from pathlib import Path;"
            "from sfn_patterns_localstack.terraform.workspace import Workspace;"
            "w = Workspace(Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]));"
            "w.apply({'names': ['a', 'b']}); print(w.outputs()['inputs'])"
        )
        other = subprocess.run(
            [sys.executable, "-c", script, str(FIXTURE), NO_ENDPOINT, str(tmp_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert other.returncode == 0, other.stderr[-3000:]
        assert workspace.outputs()["inputs"] == {"a": "a", "b": "b"}
        assert workspace.state()["serial"] > state["serial"]

        workspace.run("destroy", "-input=false", "-no-color", "-auto-approve", "-var=names=[]")
        assert workspace.state()["resources"] == []
    finally:
        workspace.close()
    assert not (tmp_path / "terraform.tfstate.backup").exists()  # the local backend's


@pytest.mark.terraform
def test_local_backend_is_the_default_outside_the_suite(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(STATE_BACKEND_ENV, raising=False)
    workspace = Workspace(FIXTURE, NO_ENDPOINT, tmp_path)
    assert workspace.backend == "local"
    try:
        assert (
            f'path = "{workspace.state_path}"' in (workspace.config_dir / OVERRIDE_NAME).read_text()
        )
        workspace.init()
        workspace.apply({"names": ["x"]})
        assert workspace.outputs() == {"inputs": {"x": "x"}, "secret": "x"}
        assert workspace.state()["resources"][0]["instances"][0]["index_key"] == "x"
    finally:
        workspace.close()
    monkeypatch.setenv(STATE_BACKEND_ENV, "s3")
    with pytest.raises(TerraformError, match=STATE_BACKEND_ENV):
        Workspace(FIXTURE, NO_ENDPOINT, tmp_path / "other")
