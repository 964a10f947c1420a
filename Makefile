# The two commands (see README.md):
#   make demo   set everything up, start LocalStack, deploy and run the demo
#   make test   set everything up and run every test
SHELL := /bin/bash
# Python may cache bytecode in the project's own tree and .venv even where the
# environment says not to (CI images often set PYTHONDONTWRITEBYTECODE=1). Otherwise
# every process recompiles every module it imports, and `make test` starts dozens of
# processes that import LocalStack and the planner (about twice the CPU of an import
# from bytecode). Lambda workers still write nothing into the unzipped function code
# (the executor sets the variable).
unexport PYTHONDONTWRITEBYTECODE
.DEFAULT_GOAL := help
VENV := .venv
# checkov scans the tracked Terraform only: not the venv, build outputs, Terraform
# data directories or the harness's ignored LocalStack override files. Nor
# tests/terraform/iam_static: a plan-only fixture that calls, many times over, the
# modules checkov already scans (tests/terraform/test_iam_static.py); scanning it adds
# minutes of CPU and no finding of its own.
CHECKOV_SKIPS := ^build/ \.venv/ \.build/ \.terraform/ localstack_override\.tf tests/terraform/iam_static/
CHECKOV_SKIP := $(foreach p,$(CHECKOV_SKIPS),--skip-path '$(p)')

.PHONY: help bootstrap demo test test-unit test-portable lint import-contracts process-words fast-checks check docs tf-docs fmt lock durations clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

# SFNP_BOOTSTRAPPED=1: a make that a bootstrapped recipe started (make test's fast
# checks) does not check the toolchain a second time.
bootstrap: ## Install the toolchain: .venv, Terraform, providers (idempotent, cached)
	@[ "$$SFNP_BOOTSTRAPPED" = 1 ] || bash scripts/bootstrap.sh

# The demo installs only what it uses (scripts/bootstrap.sh --demo: no npm, root,
# checkov, tflint or browser; the registry's providers when it answers).
demo: ## Start LocalStack, deploy every pattern, run each, write build/demo-report/index.html
	@[ "$$SFNP_BOOTSTRAPPED" = 1 ] || bash scripts/bootstrap.sh --demo
	@$(VENV)/bin/sfn-patterns demo

CHECKOV_RUN := $(VENV)/bin/checkov -d . --framework terraform --quiet --compact \
	--skip-download $(CHECKOV_SKIP)
CHECKOV := BC_SKIP_MAPPING=TRUE $(CHECKOV_RUN)
# make test replays a passing checkov result while nothing checkov reads has changed:
# its version and arguments and every file it could read (scripts/cached_check.py).
# make check always runs it.
CHECKOV_CACHED := BC_SKIP_MAPPING=TRUE $(VENV)/bin/python scripts/cached_check.py --name checkov \
	--env BC_SKIP_MAPPING $(foreach x,.tf .tf.json .tfvars .tfvars.json .hcl .tftpl .checkov.yaml .checkov.yml,--suffix $(x)) \
	$(foreach p,$(CHECKOV_SKIPS),--skip '$(p)') -- $(CHECKOV_RUN)

# make test replays a passing fast-checks result while nothing it reads has changed: the
# Python, Terraform, templates, READMEs (their generated tables), the docs site's pages
# and every text file the process-words check reads, the tools' configs and pins
# (pyproject.toml, requirements.lock, mkdocs.yml, .tflint.hcl, .terraform-docs.yml,
# bootstrap.sh) and this Makefile (scripts/cached_check.py, as for checkov: its CPU
# would come out of a run whose two cores are busy throughout). make fast-checks and
# make check always run them.
FAST_SUFFIXES := .py .tf .tf.json .tfvars .hcl .tftpl .j2 .md .yml .yaml .toml .lock .sh .cfg .json .txt .sql .cjs .svg Makefile
FAST_SKIPS := ^build/ \.venv/ \.build/ \.terraform/ node_modules/ __pycache__/ _cache/ localstack_override\.tf
FAST_CHECKS_CACHED := SFNP_BOOTSTRAPPED=1 $(VENV)/bin/python scripts/cached_check.py --name fast-checks \
	$(foreach x,$(FAST_SUFFIXES),--suffix $(x)) $(foreach p,$(FAST_SKIPS),--skip '$(p)') \
	-- $(MAKE) --no-print-directory fast-checks

# Eight workers, one LocalStack each: most test files spend most of their time waiting
# on what they observe (executions, timeouts, alarm periods), so fewer workers leave
# the two cores idle while the longest (and sleepiest) files run (docs/testing.md);
# a file's tests stay on one worker (they
# share its deployment), and files go longest first (tests/scheduling.py; xdist's own
# most-tests-first reordering is off). The 25 slowest tests are printed at the end.
# The static checks run beside pytest, whose workers leave CPU idle while they wait:
# fast-checks (lint, import contracts, process words, the docs site, README tables,
# tflint: under a minute of one core)
# and checkov (a minute of one core unless its result is replayed). Their reports are
# printed after pytest's, and any of the three failing fails the target.
# Before the workers start, scripts/warm_bytecode.py writes once the bytecode each of
# them (and each LocalStack) would compile for itself in a fresh clone's new venv: one
# test collection (assertion-rewritten modules) beside compileall of LocalStack's
# packages, so eight workers and eight LocalStacks do not each compile the same
# modules; when everything is current the step only checks timestamps.
PYTEST_WORKERS ?= 8
test: bootstrap ## Run the static checks and every test (unit + LocalStack integration)
	@mkdir -p build; \
	$(FAST_CHECKS_CACHED) > build/fast-checks.log 2>&1 & fast_pid=$$!; \
	$(CHECKOV_CACHED) > build/checkov.log 2>&1 & checkov_pid=$$!; \
	$(VENV)/bin/python scripts/warm_bytecode.py; \
	$(VENV)/bin/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25; pytest_rc=$$?; \
	wait $$fast_pid; fast_rc=$$?; \
	wait $$checkov_pid; checkov_rc=$$?; \
	echo "==> fast checks (ran beside pytest)"; cat build/fast-checks.log; \
	if [ $$fast_rc -ne 0 ]; then echo "fast checks failed (exit $$fast_rc)"; fi; \
	echo "==> checkov (terraform framework, ran beside pytest)"; cat build/checkov.log; \
	if [ $$checkov_rc -ne 0 ]; then echo "checkov failed (exit $$checkov_rc)"; fi; \
	[ $$pytest_rc -eq 0 ] && [ $$fast_rc -eq 0 ] && [ $$checkov_rc -eq 0 ]

# The portable suite (tests/portable.py): the pattern tests that need nothing but the
# AWS API, against somebody else's emulator, e.g. a LocalStack 4.14 container in CI or
# `scripts/localstack.sh start --stock 4567` here. The rest are skipped with what they
# need named. Its files share one endpoint, so they run one file per worker. It installs
# only the venv, Terraform and the providers (scripts/bootstrap.sh --portable): no Go or
# Node.js where registry.terraform.io answers, no LocalStack packages, no Lambda runtimes.
ENDPOINT ?=
PORTABLE_WORKERS ?= 4
test-portable: ## Run the pattern tests that need no harness against ENDPOINT=http://HOST:PORT
	@[ -n "$(ENDPOINT)" ] || { echo "usage: make test-portable ENDPOINT=http://HOST:PORT (a LocalStack 4.14 container, or: scripts/localstack.sh start --stock 4567)" >&2; exit 2; }
	@[ "$$SFNP_BOOTSTRAPPED" = 1 ] || bash scripts/bootstrap.sh --portable
	@LOCALSTACK_ENDPOINT=$(ENDPOINT) SFNP_PORTABLE=1 $(VENV)/bin/python -m pytest -m integration \
	  -n $(PORTABLE_WORKERS) --dist loadfile -rs \
	  $$($(VENV)/bin/python -c 'from tests.portable import PATTERN_DIRS; print(*PATTERN_DIRS)')

test-unit: bootstrap ## Only the fast tests that need no LocalStack
	@$(VENV)/bin/python -m pytest -m "not integration"

lint: bootstrap ## ruff and terraform fmt
	@$(VENV)/bin/ruff check lambda_src cli harness modules tests scripts
	@$(VENV)/bin/terraform fmt -check -recursive -diff modules examples templates tests
	@$(VENV)/bin/terraform fmt -check -diff .

tf-docs: bootstrap ## Regenerate the terraform-docs tables of every README
	@bash scripts/docs.sh

# The documentation site (mkdocs.yml, docs/): --strict fails the build on a broken link
# or anchor, a page missing from the nav and an included file that does not exist
# (tests/tooling/test_docs_site.py plants each in a copy). Into build/site.
docs: bootstrap ## Build the documentation site into build/site (mkdocs --strict)
	@echo "==> mkdocs (documentation site, --strict)"
	@NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# Words of the process that built the project (labels of internal runs, numbered periods) in
# tracked files (scripts/check_process_words.py).
process-words: bootstrap ## Fail on words of the process (run labels, numbered periods) in tracked files
	@echo "==> process words (the repository speaks of the product only)"
	@$(VENV)/bin/python scripts/check_process_words.py

# The architecture contracts of pyproject.toml's [tool.importlinter] (layers, independent
# patterns, no cycles). IMPORT_ROOTS is where the packages are found: the checkout, or
# a copy (tests/tooling/test_import_contracts.py breaks a copy to show a forbidden
# import fails this target). sfn_patterns_samples is in no distribution, hence the path.
IMPORT_ROOTS ?= lambda_src:cli:harness
import-contracts: bootstrap ## Check the import contracts (import-linter): layers, independence, no cycles
	@echo "==> import-linter (architecture contracts in pyproject.toml)"
	@PYTHONPATH=$(IMPORT_ROOTS) $(VENV)/bin/lint-imports --no-cache --config $(CURDIR)/pyproject.toml

fast-checks: lint import-contracts process-words docs ## lint, import contracts, process words, docs site, README tables current, tflint (make check without checkov)
	@echo "==> terraform-docs (README tables current)"
	@bash scripts/docs.sh --check
	@echo "==> tflint (terraform ruleset, .tflint.hcl)"
	@# The root module, then each tree that holds Terraform: a walk of the whole
	@# checkout also entered build/, where a test run beside it creates and deletes
	@# session directories (tflint failed on one deleted under it).
	@$(VENV)/bin/tflint --config "$(CURDIR)/.tflint.hcl" --format compact
	@for dir in modules examples tests; do \
	  $(VENV)/bin/tflint --chdir="$$dir" --recursive --config "$(CURDIR)/.tflint.hcl" --format compact || exit 1; \
	done

check: fast-checks ## make fast-checks, then checkov (zero findings; skips are justified inline)
	@echo "==> checkov (terraform framework)"
	@$(CHECKOV)

fmt: bootstrap ## Format Python and Terraform in place
	@$(VENV)/bin/ruff check --fix lambda_src cli harness modules tests scripts
	@$(VENV)/bin/ruff format lambda_src cli harness modules tests scripts
	@$(VENV)/bin/terraform fmt -recursive modules examples templates tests
	@$(VENV)/bin/terraform fmt .

durations: ## Keep the last full run's seconds per test file (the order make test's workers take files in)
	@test -f build/test-durations.json || { echo "run make test first: it writes build/test-durations.json"; exit 1; }
	cp build/test-durations.json tests/file_durations.json

lock: ## Re-resolve requirements.lock in a clean venv
	@bash scripts/lock.sh

clean: ## Remove build outputs (caches outside the tree stay)
	rm -rf build .build examples/*/.build .pytest_cache .ruff_cache
	find . -name localstack_override.tf -not -path './.venv/*' -delete
