# skillsvc: `make run` serves with zero configuration, `make test` runs the
# whole suite (installing MinIO and friends on first use).

TOOLS_BIN := $(CURDIR)/.tools/bin
export PATH := $(TOOLS_BIN):$(PATH)
export SKILLSVC_MINIO_BIN := $(TOOLS_BIN)/minio
# Integration tests fail, never skip, when their servers cannot start.
export SKILLSVC_REQUIRE_SERVERS := 1

GO_TEST_FLAGS ?= -race -count=1
FUZZ_TIME ?= 8s

.PHONY: all run build tools generate check-generate lint test test-go bench-smoke fuzz bench bench-load clean

all: build

run:
	go run ./cmd/skillsvc

build:
	CGO_ENABLED=0 go build -trimpath -o bin/skillsvc ./cmd/skillsvc

tools:
	TOOLS_BIN=$(TOOLS_BIN) ./scripts/tools.sh

generate: tools
	buf lint
	buf generate

# Fails when the committed generated code differs from what generate makes.
check-generate: generate
	@git diff --exit-code -- gen/ || { echo "generated code is stale: run make generate and commit" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen/)" || { git status --porcelain -- gen/; echo "untracked generated files: run make generate and commit" >&2; exit 1; }

lint:
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt needed" >&2; exit 1; }
	go mod tidy -diff
	go vet ./...

test: tools check-generate lint test-go bench-smoke fuzz

test-go:
	go test $(GO_TEST_FLAGS) ./...

# Every benchmark once, so they keep working; timings come from `make bench`.
bench-smoke:
	go test -run='^$$' -bench=. -benchtime=1x ./...

# Short fuzz runs on top of the seed corpora: the path resolver, and the
# request bounds of Edit, Read, Glob, Grep and RenderSkill, token verification,
# claim parsing and JWKS parsing.
FUZZ_TARGETS := ./internal/mounts/:FuzzResolve ./internal/vfs/:FuzzEdit ./internal/vfs/:FuzzReadOffsets \
	./internal/vfs/:FuzzGlobPattern ./internal/vfs/:FuzzGrepPattern ./internal/skills/:FuzzRenderedSize \
	./internal/auth/:FuzzJWT ./internal/auth/:FuzzClaims ./internal/auth/:FuzzJWKS

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($(FUZZ_TIME))"; \
		go test -run='^$$' -fuzz="^$${t#*:}\$$" -fuzztime=$(FUZZ_TIME) "$${t%%:*}"; \
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
