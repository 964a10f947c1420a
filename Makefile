# The two commands (see README.md):
#   make demo   set everything up, start LocalStack, deploy and run the demo
#   make test   set everything up and run every test
SHELL := /bin/bash
.DEFAULT_GOAL := help
VENV := .venv

.PHONY: help bootstrap demo test test-unit test-integration lint fmt lock clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

bootstrap: ## Install the toolchain: .venv, Terraform, providers (idempotent, cached)
	@bash scripts/bootstrap.sh

demo: bootstrap ## Start LocalStack, deploy the examples, run each state machine
	@$(VENV)/bin/sfn-patterns demo

test: bootstrap ## Run lint and every test (unit + LocalStack integration)
	@$(VENV)/bin/ruff check lambda_src harness tests scripts
	@$(VENV)/bin/terraform fmt -check -recursive -diff modules examples templates
	@$(VENV)/bin/python -m pytest

test-unit: bootstrap ## Only the fast tests that need no LocalStack
	@$(VENV)/bin/python -m pytest -m "not integration"

lint: bootstrap ## ruff and terraform fmt
	@$(VENV)/bin/ruff check lambda_src harness tests scripts
	@$(VENV)/bin/terraform fmt -check -recursive modules examples templates

fmt: bootstrap ## Format Python and Terraform in place
	@$(VENV)/bin/ruff check --fix lambda_src harness tests scripts
	@$(VENV)/bin/ruff format lambda_src harness tests scripts
	@$(VENV)/bin/terraform fmt -recursive modules examples templates

lock: ## Re-resolve requirements.lock in a clean venv
	@bash scripts/lock.sh

clean: ## Remove build outputs (caches outside the tree stay)
	rm -rf build .build examples/*/.build .pytest_cache .ruff_cache
	find . -name localstack_override.tf -not -path './.venv/*' -delete
