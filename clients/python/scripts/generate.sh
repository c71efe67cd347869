#!/usr/bin/env bash
# Regenerates the stubs in src/skillsvc/v1 from ../../proto with the pinned
# grpcio-tools (requirements-test.txt). `make generate` runs it with the
# project's virtual environment:  clients/python/scripts/generate.sh .venv/bin/python
set -euo pipefail
PYTHON=${1:-python3}
cd "$(dirname "$0")/.."
wkt=$("$PYTHON" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')
rm -f src/skillsvc/v1/*_pb2.py src/skillsvc/v1/*_pb2.pyi src/skillsvc/v1/*_pb2_grpc.py
"$PYTHON" -m grpc_tools.protoc -I ../../proto -I "$wkt" \
	--python_out=src --pyi_out=src --grpc_python_out=src \
	../../proto/skillsvc/v1/*.proto
