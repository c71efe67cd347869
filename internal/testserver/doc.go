// Package testserver starts real MinIO and Redis servers as subprocesses for
// integration tests. StartMinIO and StartRedis give a test its own server that
// t.Cleanup stops; SharedMinIO and SharedRedis start one server per test binary
// on first use and reuse it, so a package's TestMain must call Shutdown after
// m.Run. RunMinIO and RunRedis start the same servers outside tests (for
// cmd/bench-load), and RunSkillsvc, the one launcher of the skillsvc binary,
// starts it (for the end-to-end tests of cmd/skillsvc,
// cmd/testenv and cmd/bench-load) with the per-user limits a deployment gets:
// it refuses flags that lift them (LiftedLimit) unless the caller says why.
// StartS3Proxy puts a latency proxy that counts requests by S3 operation in
// front of MinIO, for the load benchmarks. S3Stores are the other S3 stores
// of the matrix (moto's S3, versitygw, and the store SKILLSVC_S3_ENDPOINT
// names), and MinIO.IgnoringConditions is MinIO behind a proxy that drops
// If-Match and If-None-Match, for the write-safety probe to refuse.
// Every server listens on a free loopback port with its own temporary
// directory and runs in its own process group, which is killed when
// the server is stopped (and, on Linux, when the test binary dies). Binaries
// come from SKILLSVC_MINIO_BIN / SKILLSVC_REDIS_BIN / SKILLSVC_VERSITYGW_BIN, the repository's
// .tools/bin (see `make tools`) or PATH; when one is missing or will not
// start, tests are skipped locally but fail when CI or
// SKILLSVC_REQUIRE_SERVERS=1 is set, so CI never skips silently.
package testserver
