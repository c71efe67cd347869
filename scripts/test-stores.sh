#!/usr/bin/env bash
# The store matrix (make test-stores): the object-store acceptance suite,
# the write-safety probe and the higher-layer storage suites
# (objstoretest.ForEachBackend's "env" subtests) on MinIO, moto, versitygw
# and s3rver, each but MinIO started here and named to the suites by
# SKILLSVC_S3_ENDPOINT; the probe on MinIO behind a proxy that drops
# If-Match/If-None-Match; the cache suite on Redis and Valkey. Prints one
# row per store; the go test output is in $LOG. STORES_HIGHER=0 skips the
# higher-layer suites (the slow part: minutes per store).
set -uo pipefail
cd "$(dirname "$0")/.."
TOOLS_BIN=${TOOLS_BIN:-$(pwd)/.tools/bin}
export PATH="$TOOLS_BIN:$PATH" SKILLSVC_MINIO_BIN="$TOOLS_BIN/minio" SKILLSVC_REQUIRE_SERVERS=1
unset SKILLSVC_S3_ENDPOINT SKILLSVC_S3_ACCESS_KEY SKILLSVC_S3_SECRET_KEY SKILLSVC_S3_REGION
LOG=${LOG:-$(mktemp -t skillsvc-stores.XXXXXX)}
HIGHER=${STORES_HIGHER:-1}
HIGHER_PKGS=(./internal/blobs ./internal/libindex ./internal/library ./internal/skills ./internal/vfs)
S3RVER=s3rver@3.7.1
work=$(mktemp -d -t skillsvc-stores.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { # an S3 server answers (any status) within 60s
	for _ in $(seq 600); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done
	return 1
}

# gotest NAME ARGS...: go test -v, output appended to $LOG under NAME.
gotest() {
	local name=$1; shift
	echo "=== $name: go test $*" >>"$LOG"
	go test -count=1 -v "$@" >"$work/out" 2>&1
	local rc=$?
	cat "$work/out" >>"$LOG"
	return $rc
}
# passed PATTERN: "N/M" subtests matching PATTERN passed in the last run.
passed() {
	local ok all
	ok=$(grep -cE -- "--- PASS: $1" "$work/out")
	all=$(grep -cE -- "--- (PASS|FAIL|SKIP): $1" "$work/out")
	echo "$ok/$all"
}
acceptance() { # RUN-PATTERN SUBTEST-PREFIX
	gotest acceptance -run "$1" ./internal/objstore/s3/
	passed "$2/[^/ ]+ "
}
probe() { # RUN-PATTERN
	if gotest probe -run "$1" ./internal/objstore/s3/; then echo accepted
	elif grep -q "ignores conditional writes" "$work/out"; then
		local what=()
		for c in 'If-None-Match' 'If-Match (' 'concurrent creates'; do grep -qF "$c" "$work/out" && what+=("${c% (}"); done
		echo "refused: ignores $(IFS=,; echo "${what[*]}" | sed 's/,/, /g')"
	else echo FAIL; fi
}
higher() { # SUBTEST
	[[ $HIGHER == 1 ]] || { echo skipped; return; }
	# The tests that run a suite through objstoretest.ForEachBackend,
	# found in the source so the list cannot go stale.
	local tests
	tests=$(for f in $(grep -rl 'ForEachBackend(t' --include='*_test.go' "${HIGHER_PKGS[@]}"); do
		awk '/^func Test/ { sub(/\(.*/, "", $2); name = $2 } /ForEachBackend\(t/ { print name }' "$f"
	done | sort -u | paste -sd'|')
	gotest higher -run "^($tests)\$/^$1\$" "${HIGHER_PKGS[@]}"
	local failed
	failed=$(grep -cE -- "--- FAIL: [^ ]+/$1 " "$work/out")
	if ((failed == 0)) && grep -qE -- "--- PASS: [^ ]+/$1 " "$work/out"; then echo pass; else echo "FAIL ($failed suites)"; fi
}

rows=()
row() { rows+=("$(printf '| %s | %s | %s | %s | %s |' "$@")"); echo "$1: done" >&2; }

# MinIO, started by the suites themselves.
minio_version=$(cut -d@ -f2 "$TOOLS_BIN/.minio.version" 2>/dev/null) # a pseudo-version: the commit's date
row "MinIO" "$minio_version" \
	"$(acceptance '^TestAcceptanceMinIO$' TestAcceptanceMinIO)" "$(probe '^TestStores$/^minio$')" "$(higher minio)"
row "MinIO, conditions dropped by a test proxy" "$minio_version" "n/a" \
	"$(if gotest probe -run '^TestWriteSafetyRefusesIgnoredConditions$' ./internal/objstore/s3/; then echo 'refused (as it must be)'; else echo 'FAIL: not refused'; fi)" "n/a"

# env_store NAME VERSION ACCESS SECRET PORT: runs the suites on the store
# listening on PORT.
env_store() {
	local name=$1 version=$2
	if ! wait_port "$5"; then row "$name" "$version" "did not start" "" ""; return; fi
	export SKILLSVC_S3_ENDPOINT="http://127.0.0.1:$5" SKILLSVC_S3_ACCESS_KEY=$3 SKILLSVC_S3_SECRET_KEY=$4
	row "$name" "$version" "$(acceptance '^TestStores$/^env$/Acceptance' 'TestStores/env/Acceptance')" \
		"$(probe '^TestStores$/^env$/WriteSafety')" "$(higher env)"
	unset SKILLSVC_S3_ENDPOINT SKILLSVC_S3_ACCESS_KEY SKILLSVC_S3_SECRET_KEY
}

port=$(free_port)
moto_server -H 127.0.0.1 -p "$port" >>"$LOG" 2>&1 &
pids+=($!)
env_store "moto" "$(cut -d= -f3 "$TOOLS_BIN/.moto_server.version" 2>/dev/null)" test test "$port"
kill "${pids[-1]}"

port=$(free_port)
mkdir -p "$work/versitygw"
versitygw --access vgw-test --secret vgw-test-secret --port "127.0.0.1:$port" posix "$work/versitygw" >>"$LOG" 2>&1 &
pids+=($!)
env_store "versitygw (posix)" "$(cut -d@ -f2 "$TOOLS_BIN/.versitygw.version" 2>/dev/null)" vgw-test vgw-test-secret "$port"
kill "${pids[-1]}"

# s3rver ignores If-Match and If-None-Match: the probe must refuse it.
s3rver_dir="$(dirname "$TOOLS_BIN")/s3rver"
if [[ ! -x "$s3rver_dir/node_modules/.bin/s3rver" ]]; then
	echo "test-stores: npm install $S3RVER" >&2
	npm install -q --no-audit --no-fund --prefix "$s3rver_dir" "$S3RVER" >>"$LOG" 2>&1
fi
if [[ -x "$s3rver_dir/node_modules/.bin/s3rver" ]]; then
	port=$(free_port)
	mkdir -p "$work/s3rver"
	"$s3rver_dir/node_modules/.bin/s3rver" -d "$work/s3rver" -a 127.0.0.1 -p "$port" -s >>"$LOG" 2>&1 &
	pids+=($!)
	env_store "s3rver" "${S3RVER#*@}" S3RVER S3RVER "$port"
	kill "${pids[-1]}"
else
	row "s3rver" "${S3RVER#*@}" "not installed (npm)" "" ""
fi

# The cache suite on Redis and Valkey.
cache() { # REDIS-BIN
	if SKILLSVC_REDIS_BIN=$1 gotest cache ./internal/cache/; then echo pass; else echo FAIL; fi
}
row "Redis (cache)" "$(redis-server --version | grep -o 'v=[^ ]*' | cut -c3-)" "$(cache "$(command -v redis-server)")" "n/a" "n/a"
row "Valkey (cache)" "$("$TOOLS_BIN/valkey-server" --version | grep -o 'v=[^ ]*' | cut -c3-)" "$(cache "$TOOLS_BIN/valkey-server")" "n/a" "n/a"

echo
echo "| store | version | acceptance (or cache suite) | write-safety probe | higher-layer suites |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "go test output: $LOG"
