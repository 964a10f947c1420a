"""Run a Terraform configuration against LocalStack, as tflocal does, without touching it.

A configuration inside this checkout is applied from a staging tree in the scratch
directory (see :func:`stage`): its files are links to the checkout's, plus one
``localstack_override.tf`` pointing the AWS provider at LocalStack and the state at
the scratch directory. ``.terraform/`` (``TF_DATA_DIR``), the lock file and built
zips land there too, so the checkout stays clean and any number of tests, demos and
benchmarks can apply the same example at the same time.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.terraform import state_server
from sfn_patterns_localstack.terraform.leftovers import created_resources, still_there

REPO_ROOT = Path(__file__).resolve().parents[3]
OVERRIDE_NAME = "localstack_override.tf"
# The AWS provider of the project's mirror caps each pause between its consistency
# checks at this (upstream: up to 10 s, then 10 matching reads 5 s apart for an S3
# lifecycle configuration). Unset, the same binary behaves as upstream's.
PROVIDER_POLL_CAP_ENV = "SFN_PATTERNS_PROVIDER_MAX_POLL_DELAY"
PROVIDER_POLL_CAP = "200ms"

# The provider reaches LocalStack through AWS_ENDPOINT_URL (every service, one URL),
# set per command in Workspace._env, not through an `endpoints` block: validating that
# block (a set of one object with an attribute for each of the provider's ~250 service
# keys) cost the provider about a CPU-second per process start, in the plugin
# framework's path strings (a minimal plan: 3.6 CPU-seconds with the block, 0.6
# without), and Terraform starts the provider three or four times per command.
ENDPOINT_ENV = "AWS_ENDPOINT_URL"

# Where Terraform keeps the state while it runs. "local" (the default) rewrites the
# state file after every resource change: a third of an apply's or destroy's CPU for a
# 500 KB state, growing with the square of its size. "http" keeps the state in memory
# and sends it to this process's state server (state_server.py) at the end of each
# command (and every 20 s of a long one); the server writes the same file. The test
# suite selects "http" (tests/conftest.py). It is not the default because the state is
# then only reachable while the process that made the Workspace runs: running
# Terraform by hand in the staged directory afterwards (the examples' READMEs) needs
# the local backend. The address reaches the backend as TF_HTTP_ADDRESS, per command,
# so the override (and the backend's hash in .terraform/) is the same from one
# process to the next.
STATE_BACKEND_ENV = "SFN_PATTERNS_TF_BACKEND"
STATE_BACKENDS = ("http", "local")


def _checkout_root(path: Path) -> Path | None:
    """The checkout holding ``path`` (a directory with pyproject.toml and modules/)."""
    for candidate in (path, *path.parents):
        if (candidate / "pyproject.toml").is_file() and (candidate / "modules").is_dir():
            return candidate
    return None


def stage(config_dir: Path, work_dir: Path) -> Path:
    """Mirror ``config_dir`` under ``work_dir/tree`` with links; return the staged directory.

    Why: the override file must live in the configuration's directory, and two runs
    applying one example at once would overwrite each other's override. The staging
    tree has a real directory for each component of the path from the checkout's
    root to ``config_dir``, symbolic links for everything else (siblings, modules,
    templates, lambda_src...) and links to the configuration's own files, so
    relative module sources (``../../modules/x``) and paths resolve exactly as in
    the checkout, and edits to the checkout show through. Directories outside a
    checkout (temporary test configurations) are used as they are. Idempotent.
    """
    config_dir = Path(config_dir).resolve()
    root = _checkout_root(config_dir)
    if root is None:
        return config_dir

    def link(source: Path, target: Path) -> None:
        if not target.is_symlink() and not target.exists():
            target.symlink_to(source)

    source, target = root, Path(work_dir).resolve() / "tree"
    for part in config_dir.relative_to(root).parts:
        target.mkdir(parents=True, exist_ok=True)
        for entry in source.iterdir():
            if entry.name != part and not entry.name.startswith("."):
                link(entry, target / entry.name)
        source, target = source / part, target / part
    target.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        # Not hidden files (.terraform.lock.hcl: init would write through the link).
        if entry.name != OVERRIDE_NAME and not entry.name.startswith("."):
            link(entry, target / entry.name)
    return target


def interpreter_first_path(path: str | None = None) -> str:
    """``path`` (default: this process's PATH) with this interpreter's directory first.

    Why: a configuration that runs ``python3`` by name (the lambda-function module's
    packager, the planner in ``terraform test``) then gets the harness's interpreter,
    with the library's dependencies, not a version manager's shim: a pyenv shim costs
    two shell scripts and a ``pyenv which`` per call, dozens of calls per suite.
    """
    rest = os.environ.get("PATH", "") if path is None else path
    return os.pathsep.join([str(Path(sys.executable).parent), rest])


class TerraformError(RuntimeError):
    """A terraform command failed; the message carries its output."""


def terraform_binary() -> str:
    """The project's terraform wrapper (.venv/bin/terraform), else terraform on PATH."""
    candidate = os.environ.get("SFN_PATTERNS_TERRAFORM_BIN") or str(
        REPO_ROOT / ".venv/bin/terraform"
    )
    if Path(candidate).exists():
        return candidate
    found = shutil.which("terraform")
    if not found:
        raise TerraformError("terraform not found: run `make bootstrap` first")
    return found


def state_backend() -> str:
    """The state backend the harness selects (:data:`STATE_BACKEND_ENV`, default local)."""
    backend = os.environ.get(STATE_BACKEND_ENV) or "local"
    if backend not in STATE_BACKENDS:
        raise TerraformError(
            f"{STATE_BACKEND_ENV}={backend!r}: use one of {', '.join(STATE_BACKENDS)}"
        )
    return backend


def override_text(
    state_path: Path, aliases: dict[str, str] | None = None, backend: str = "local"
) -> str:
    """The override file that points a configuration at LocalStack.

    Endpoints are not in it: the harness sets ``AWS_ENDPOINT_URL`` for every command
    (:data:`ENDPOINT_ENV`); export it to run Terraform by hand in the staged directory.
    ``aliases`` maps an ``aws`` provider alias of the configuration to the account it
    acts in (LocalStack takes the account from a 12-digit access key), so a
    configuration that spans accounts runs unchanged. ``backend`` "local" keeps the
    state in ``state_path``; "http" in Terraform's http backend, whose address (the
    harness's state server, which writes ``state_path``) comes from ``TF_HTTP_ADDRESS``.
    """
    providers = [
        ("", "test"),
        *((f'  alias = "{a}"\n', acct) for a, acct in (aliases or {}).items()),
    ]
    blocks = "\n".join(
        f"""provider "aws" {{
{alias}  access_key                  = "{key}"
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true
  s3_use_path_style           = true
}}
"""
        for alias, key in providers
    )
    if backend == "http":
        backend_block = f"""  # {state_path}, through the harness's state server (TF_HTTP_ADDRESS)
  backend "http" {{}}"""
    else:
        backend_block = f"""  backend "local" {{
    path = "{state_path}"
  }}"""
    return f"""# Written by the sfn-patterns LocalStack harness (never committed; see .gitignore).
# The provider's endpoints come from {ENDPOINT_ENV}, which the harness sets.
terraform {{
{backend_block}
}}

{blocks}"""


COMMAND_LOG_ENV = "SFNP_TF_LOG"


def _record_command(args: tuple[str, ...], source: Path, usage, wall: float) -> None:
    """Append one JSON line per Terraform command to ``$SFNP_TF_LOG``, when it is set.

    Why: Terraform (core and provider) is a large share of the suite's CPU, and which
    commands of which configurations cost it is what decides where to cut. Each line
    names the command, the configuration, the test running it, and its CPU seconds.
    """
    target = os.environ.get(COMMAND_LOG_ENV)
    if not target:
        return
    line = {
        "command": args[0] if args else "",
        "config": source.name,
        "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
        "wall": round(wall, 2),
    }
    with open(target, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


class Workspace:
    """One Terraform configuration applied to one LocalStack endpoint."""

    def __init__(
        self,
        config_dir: Path,
        endpoint: str,
        scratch_dir: Path,
        log: Callable[[str], None] | None = None,
        aliases: dict[str, str] | None = None,
    ) -> None:
        self.source_dir = Path(config_dir).resolve()
        self.endpoint = endpoint
        self.scratch_dir = Path(scratch_dir).resolve()
        self.scratch_dir.mkdir(parents=True, exist_ok=True)
        self.state_path = self.scratch_dir / "terraform.tfstate"
        self.config_dir = stage(self.source_dir, self.scratch_dir)
        self.log = log or (lambda line: print(line, file=sys.stderr))
        self.binary = terraform_binary()
        # None runs the provider with upstream's pauses (tests of the cap itself).
        self.provider_poll_cap: str | None = PROVIDER_POLL_CAP
        self.aws = client_factory(endpoint)
        self.backend = state_backend()
        (self.config_dir / OVERRIDE_NAME).write_text(
            override_text(self.state_path, aliases, self.backend)
        )

    def _env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_HTTP_"))}
        env.update(
            TF_DATA_DIR=str(self.scratch_dir / ".terraform"),
            TF_IN_AUTOMATION="1",
            TF_INPUT="0",
            CHECKPOINT_DISABLE="1",
            # No mutual TLS on the local channel between Terraform and each provider
            # process it starts: both sides generated and verified a P-521 certificate
            # per provider start (perf: 3-5 % of a plan's CPU). terraform-plugin-sdk's
            # own acceptance-test harness sets it too; calls to AWS are unaffected.
            TF_DISABLE_PLUGIN_TLS="1",
            # Configurations that run the planner at plan time use this Python
            # (it has the library's dependencies); others ignore the variable.
            TF_VAR_python_executable=sys.executable,
            PATH=interpreter_first_path(),
        )
        env[ENDPOINT_ENV] = self.endpoint
        if self.backend == "http":
            env["TF_HTTP_ADDRESS"] = state_server.address_for(self.state_path)
        # LocalStack is consistent at once: cap the provider's AWS-sized pauses between
        # consistency checks (a build-time addition, scripts/aws_provider_trim.py).
        if self.provider_poll_cap:
            env[PROVIDER_POLL_CAP_ENV] = self.provider_poll_cap
        return env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run ``terraform ARGS`` in the configuration directory and capture its output."""
        self.log(f"$ terraform {' '.join(args)}  ({self.config_dir.name})")
        started = time.monotonic()
        with subprocess.Popen(
            [self.binary, *args],
            cwd=self.config_dir,
            env=self._env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as child:
            # Both pipes drained before the wait4 (not Popen.wait): the command's own
            # CPU (Terraform and the provider processes it reaped), which no
            # process-wide rusage gives when tests run deployments side by side.
            errors: list[str] = []
            reader = threading.Thread(target=lambda: errors.append(child.stderr.read()))
            reader.start()
            stdout = child.stdout.read()
            reader.join()
            stderr = errors[0]
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
        proc = subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)
        _record_command(args, self.source_dir, usage, time.monotonic() - started)
        if check and proc.returncode != 0:
            raise TerraformError(
                f"terraform {' '.join(args)} failed in {self.config_dir} "
                f"(exit {proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
            )
        return proc

    @staticmethod
    def var_args(variables: dict[str, object] | None) -> list[str]:
        """``-var=NAME=VALUE`` arguments (JSON for anything but a string) for a command."""
        args = []
        for key, value in (variables or {}).items():
            rendered = value if isinstance(value, str) else json.dumps(value)
            args.append(f"-var={key}={rendered}")
        return args

    def init(self) -> None:
        """``terraform init`` from the offline provider mirror."""
        self.run("init", "-input=false", "-no-color")

    def apply(self, variables: dict[str, object] | None = None) -> subprocess.CompletedProcess:
        """``terraform apply -auto-approve``; returns the finished process (its output)."""
        return self.run(
            "apply", "-input=false", "-no-color", "-auto-approve", *self.var_args(variables)
        )

    def apply_saved_plan(
        self,
        variables: dict[str, object] | None = None,
        before_apply: Callable[[Path], None] | None = None,
    ) -> subprocess.CompletedProcess:
        """``terraform plan -out``, then ``before_apply(config_dir)``, then apply that file.

        What a CI pipeline with separate plan and apply jobs does; ``before_apply`` can
        take away what the plan left on disk, as a fresh apply runner would not have it.
        """
        plan = self.scratch_dir / "saved.tfplan"
        self.run("plan", "-input=false", "-no-color", f"-out={plan}", *self.var_args(variables))
        if before_apply is not None:
            before_apply(self.config_dir)
        return self.run("apply", "-input=false", "-no-color", str(plan))

    def plan_exit_code(self, variables: dict[str, object] | None = None) -> tuple[int, str]:
        """``terraform plan -detailed-exitcode``: 0 no changes, 2 changes, 1 error."""
        proc = self.run(
            "plan",
            "-input=false",
            "-no-color",
            "-detailed-exitcode",
            *self.var_args(variables),
            check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    def state(self) -> dict[str, object]:
        """The state file as a document (empty before the first apply)."""
        return json.loads(self.state_path.read_text()) if self.state_path.is_file() else {}

    def destroy(self, variables: dict[str, object] | None = None) -> None:
        """``terraform destroy -auto-approve``, then prove nothing it created is left.

        Every resource the state held is looked up through its service's list API, all
        pages; one that still exists fails the destroy with its address. The destroy
        skips Terraform's refresh (``-refresh=false``): it would read every resource
        back only to delete it, a full plan's CPU per teardown, and the leftover check
        proves the outcome the refresh would otherwise protect.
        """
        created = created_resources(self.state())
        self.run(
            "destroy",
            "-input=false",
            "-no-color",
            "-auto-approve",
            "-refresh=false",
            *self.var_args(variables),
        )
        left = still_there(
            self.aws, created, lambda account: client_factory(self.endpoint, account=account)
        )
        if left:
            raise TerraformError(f"destroy left resources behind: {', '.join(left)}")

    def outputs(self) -> dict[str, object]:
        """Every root output's value, as ``terraform output -json`` gives it.

        Read from the state, where that command reads them too (the root module's
        outputs are saved with each snapshot): a Terraform start saved, 0.3-0.5
        CPU-seconds per deployment.
        """
        raw = self.state().get("outputs") or {}
        return {name: spec["value"] for name, spec in raw.items()}

    def close(self) -> None:
        """Remove the override file (the scratch directory is the caller's)."""
        (self.config_dir / OVERRIDE_NAME).unlink(missing_ok=True)

    @contextlib.contextmanager
    def initialized(self) -> Iterator[Workspace]:
        """Init, yield the workspace for plans of its own, then close (nothing applied)."""
        try:
            self.init()
            yield self
        finally:
            self.close()

    @contextlib.contextmanager
    def applied(
        self,
        variables: dict[str, object] | None = None,
        destroy: bool = True,
        before_apply: Callable[[Path], None] | None = None,
    ) -> Iterator[dict[str, object]]:
        """Init and apply, yield the outputs, then destroy (unless told not to) and close.

        After a clean destroy the state must hold no resource: anything left would
        be a resource Terraform lost track of. ``destroy=False`` leaves the deployment
        to its LocalStack's end (a throwaway instance needs no teardown).
        ``before_apply`` applies through a saved plan instead (``apply_saved_plan``).
        """
        try:
            self.init()
            if before_apply is None:
                self.apply(variables)
            else:
                self.apply_saved_plan(variables, before_apply)
            yield self.outputs()
        finally:
            try:
                if destroy:
                    self.destroy(variables)
            finally:
                self.close()
        if not destroy:
            return
        state = json.loads(self.state_path.read_text())
        if state["resources"]:
            raise TerraformError(f"destroy left resources in the state: {state['resources']}")
