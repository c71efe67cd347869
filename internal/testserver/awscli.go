package testserver

import (
	"os"
	"strings"
	"testing"
)

const awsBinEnv = "SKILLSVC_AWS_BIN"

// AWSCLI returns the path of the aws command line tool, for tests that
// change a bucket the way users do, outside skillsvc. Like a server, a
// missing one skips the test locally and fails it under CI or
// SKILLSVC_REQUIRE_SERVERS=1 (`make tools` installs it).
func AWSCLI(t testing.TB) string {
	t.Helper()
	Integration(t, "the aws CLI")
	bin, err := findBinary(awsBinEnv, onPath("aws"), atPath("/usr/bin/aws"))
	if err != nil {
		unavailable(t, "aws CLI", awsBinEnv, err)
	}
	return bin
}

// AWSEnv is the environment for an AWS tool (the aws CLI, an SDK) that
// talks to m and nothing else: the process environment without its AWS_
// variables, so a developer's profile, session token or endpoint cannot
// redirect it, plus m's credentials and region and no config files. Pass
// --endpoint-url m.Endpoint to the CLI.
func (m *MinIO) AWSEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	region := m.Region
	if region == "" {
		region = minioRegion
	}
	return append(env,
		"AWS_ACCESS_KEY_ID="+m.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+m.SecretKey,
		"AWS_DEFAULT_REGION="+region,
		"AWS_CONFIG_FILE="+os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE="+os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=", // the CLI v2 would page output through less
	)
}
