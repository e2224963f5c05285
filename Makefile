# Two commands do all the set-up on a fresh machine:
#   make up    start the whole local stack and serve the API on 127.0.0.1:8000
#   make test  lint, type-check and run the whole test suite
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: up test lint typecheck unit install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check agent_memory tests

typecheck: $(STAMP)
	$(VENV)/bin/mypy agent_memory

test: lint typecheck
	$(VENV)/bin/pytest -q -ra

unit: $(STAMP)
	$(VENV)/bin/pytest -q tests/unit

up: $(STAMP)
	$(VENV)/bin/agent-memory up

clean:
	rm -rf .local
