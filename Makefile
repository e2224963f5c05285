# Two commands do all the set-up on a fresh machine:
#   make up    start the whole local stack and serve the API on 127.0.0.1:8000
#   make test  lint, type-check and run the whole test suite
# Options for `make up`: INDEX=milvus (a real Milvus server on loopback), DOCKER=1 (containers
# from localstack/docker-compose.yml instead of the Docker-free emulator), PORT=8000.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
INDEX  ?= lite
PORT   ?= 8000
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)

.PHONY: up down test lint typecheck unit install clean synth

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check agent_memory lambdas stacks app.py tests examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy agent_memory lambdas stacks app.py

test: lint typecheck $(NODE_STAMP)
	$(VENV)/bin/pytest -q -ra

synth: $(STAMP) $(NODE_STAMP)
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 npx cdk synth

unit: $(STAMP)
	$(VENV)/bin/pytest -q tests/unit

ifeq ($(DOCKER),1)
up: $(STAMP)
	$(COMPOSE) -f localstack/docker-compose.yml up -d --wait
	AWS_ACCESS_KEY_ID=$${MINIO_ROOT_USER:-agentmemory} AWS_SECRET_ACCESS_KEY=$${MINIO_ROOT_PASSWORD:-agentmemory-local-only} \
	$(VENV)/bin/agent-memory up --port $(PORT) --s3-endpoint http://127.0.0.1:9000 \
	  --sqs-endpoint http://127.0.0.1:4566 --index-uri http://127.0.0.1:19530
else
up: $(STAMP)
	$(VENV)/bin/agent-memory up --port $(PORT) --index $(INDEX)
endif

down:
	-$(VENV)/bin/agent-memory down
	-test "$(DOCKER)" != 1 || $(COMPOSE) -f localstack/docker-compose.yml down

clean: down
	rm -rf .local
