# The two commands (see README.md):
#   make demo   set everything up, start LocalStack, deploy and run the demo
#   make test   set everything up and run every test
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv
# checkov scans the tracked Terraform only: not the venv, build outputs, Terraform
# data directories or the harness's ignored LocalStack override files.
CHECKOV_SKIP := --skip-path '^build/' --skip-path '\.venv/' --skip-path '\.build/' --skip-path '\.terraform/' --skip-path 'localstack_override\.tf'

.PHONY: help bootstrap demo test test-unit test-integration lint check docs fmt lock clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

bootstrap: ## Install the toolchain: .venv, Terraform, providers (idempotent, cached)
	@bash scripts/bootstrap.sh

demo: bootstrap ## Start LocalStack, deploy every pattern, run each, write build/demo-report/index.html
	@$(VENV)/bin/sfn-patterns demo

# Three workers, one LocalStack each; a file's tests stay on one worker (they share
# its deployment). The 25 slowest tests are printed at the end.
PYTEST_WORKERS ?= 3
test: check ## Run the static checks and every test (unit + LocalStack integration)
	@$(VENV)/bin/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --durations=25

test-unit: bootstrap ## Only the fast tests that need no LocalStack
	@$(VENV)/bin/python -m pytest -m "not integration"

lint: bootstrap ## ruff and terraform fmt
	@$(VENV)/bin/ruff check lambda_src cli harness modules tests scripts
	@$(VENV)/bin/terraform fmt -check -recursive -diff modules examples templates tests
	@$(VENV)/bin/terraform fmt -check -diff .

docs: bootstrap ## Regenerate the terraform-docs tables of every README
	@bash scripts/docs.sh

check: lint ## lint, README tables current, then tflint and checkov (zero findings; skips are justified inline)
	@echo "==> terraform-docs (README tables current)"
	@bash scripts/docs.sh --check
	@echo "==> tflint (terraform ruleset, .tflint.hcl)"
	@$(VENV)/bin/tflint --recursive --config "$(CURDIR)/.tflint.hcl" --format compact
	@echo "==> checkov (terraform framework)"
	@BC_SKIP_MAPPING=TRUE $(VENV)/bin/checkov -d . --framework terraform --quiet --compact \
		--skip-download $(CHECKOV_SKIP)

fmt: bootstrap ## Format Python and Terraform in place
	@$(VENV)/bin/ruff check --fix lambda_src cli harness modules tests scripts
	@$(VENV)/bin/ruff format lambda_src cli harness modules tests scripts
	@$(VENV)/bin/terraform fmt -recursive modules examples templates tests
	@$(VENV)/bin/terraform fmt .

lock: ## Re-resolve requirements.lock in a clean venv
	@bash scripts/lock.sh

clean: ## Remove build outputs (caches outside the tree stay)
	rm -rf build .build examples/*/.build .pytest_cache .ruff_cache
	find . -name localstack_override.tf -not -path './.venv/*' -delete
