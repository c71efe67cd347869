# skillsvc: `make run` serves with zero configuration, `make test` runs the
# whole suite (installing MinIO and friends on first use).

TOOLS_BIN := $(CURDIR)/.tools/bin
export PATH := $(TOOLS_BIN):$(PATH)
export SKILLSVC_MINIO_BIN := $(TOOLS_BIN)/minio
# Integration tests fail, never skip, when their servers cannot start.
export SKILLSVC_REQUIRE_SERVERS := 1

GO_TEST_FLAGS ?= -race -count=1

.PHONY: all run build tools generate check-generate lint test test-go test-clients test-python test-ts \
	test-mcp-host pyenv tsenv mcphostenv bench-smoke fuzz bench bench-load clean

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

tsenv: clients/ts/node_modules/.stamp
clients/ts/node_modules/.stamp: clients/ts/package-lock.json
	cd clients/ts && npm ci --no-audit --no-fund
	touch $@

mcphostenv: test/mcp-host/node_modules/.stamp
test/mcp-host/node_modules/.stamp: test/mcp-host/package-lock.json
	cd test/mcp-host && npm ci --no-audit --no-fund
	touch $@

tools:
	TOOLS_BIN=$(TOOLS_BIN) ./scripts/tools.sh

# The tool definition (internal/tooldefs/tools.json) ships in the Python
# client package as a copy of the file.
TOOL_DEFINITIONS := internal/tooldefs/tools.json

generate: tools pyenv tsenv
	buf lint
	buf generate
	clients/python/scripts/generate.sh $(PY)
	rm -rf clients/ts/src/gen && cd clients/ts && npm run --silent generate
	cp $(TOOL_DEFINITIONS) clients/python/src/skillsvc/tool_definitions.json

GENERATED := gen/ clients/python/src/skillsvc/v1/ clients/python/src/skillsvc/tool_definitions.json clients/ts/src/gen/

# Fails when the committed generated code differs from what generate makes.
check-generate: generate
	@git diff --exit-code -- $(GENERATED) || { echo "generated code is stale: run make generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- $(GENERATED))" || { git status --porcelain -- $(GENERATED); echo "untracked generated files: run make generate and commit" >&2; exit 1; }

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed" >&2; exit 1; }
	go mod tidy -diff
	go vet ./...

test: tools check-generate lint test-go test-clients bench-smoke fuzz

test-go:
	go test $(GO_TEST_FLAGS) ./...

# Suites in other languages against the real binary on MinIO: the Python
# and TypeScript clients (each with a Deep Agents agent; Python's with the
# examples), and the official TypeScript MCP SDK as an MCP host.
test-clients: test-python test-ts test-mcp-host

test-python: pyenv bin/testenv
	cd clients/python && $(PY) -m pytest -q -p skillsvc.testing -c pyproject.toml tests ../../examples/python

test-ts: tsenv bin/testenv
	cd clients/ts && npm test

test-mcp-host: mcphostenv bin/testenv
	cd test/mcp-host && npm test

# Every benchmark once, so they keep working; timings come from `make bench`.
bench-smoke:
	go test -run='^$$' -bench=. -benchtime=1x ./...

# Short fuzz runs on top of the seed corpora: the path resolver, and the
# request bounds of Edit, Read, Glob, Grep and RenderSkill, token verification,
# claim parsing and JWKS parsing, the /mcp handler on an initialized session
# and skill:// URI parsing. Budgets are execution counts (about 8s each
# on a 2-vCPU machine), not durations: with a duration, Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out mid-call (golang/go#75804, fixed in Go 1.27).
FUZZ_TARGETS := ./internal/mounts/:FuzzResolve:100000x ./internal/vfs/:FuzzEdit:2000x \
	./internal/vfs/:FuzzReadOffsets:10000x ./internal/vfs/:FuzzGlobPattern:20000x \
	./internal/vfs/:FuzzGrepPattern:10000x ./internal/skills/:FuzzRenderedSize:6000x \
	./internal/auth/:FuzzJWT:15000x ./internal/auth/:FuzzClaims:15000x ./internal/auth/:FuzzJWKS:20000x \
	./internal/mcpserver/:FuzzMCPRequest:20000x ./internal/mcpserver/:FuzzSkillURI:50000x

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$${rest#*:}; \
		echo "fuzz $$name ($$n)"; \
		go test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$$n "$$pkg"; \
	done

bench: tools
	go test -run='^$$' -bench=. -benchmem ./...

# The skills catalog end to end: real MinIO, redis-server and skillsvc
# processes, 20ms of S3 latency, libraries of 10, 100 and 1,000 skills.
# Adjust with flags, e.g. make bench-load BENCH_LOAD_FLAGS='-sizes 1000 -users 100'
# (go run ./cmd/bench-load -help lists them).
bench-load: tools
	go run ./cmd/bench-load $(BENCH_LOAD_FLAGS)

clean:
	rm -rf bin data
