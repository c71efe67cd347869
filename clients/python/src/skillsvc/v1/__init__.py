"""Generated protobuf and gRPC stubs for skillsvc.v1 (scripts/generate.sh)."""
