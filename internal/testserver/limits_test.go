package testserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLiftedLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"defaults", []string{"--listen=127.0.0.1:0", "--storage=s3"}, []string{"HOME=/root"}, ""},
		{"rate off", []string{"--listen=127.0.0.1:0", "--limits.rate=0"}, nil, "--limits.rate=0"},
		{"concurrency off, one dash", []string{"-limits.concurrency=0"}, nil, "-limits.concurrency=0"},
		{"value as the next argument", []string{"--limits.rate", "0"}, nil, "--limits.rate 0"},
		{"rate raised", []string{"--limits.rate=1e6"}, nil, "--limits.rate=1e6"},
		{"burst raised", []string{"--limits.burst=10000"}, nil, "--limits.burst=10000"},
		{"concurrency raised", []string{"--limits.concurrency=33"}, nil, "--limits.concurrency=33"},
		{"lowered to test the limits", []string{"--limits.rate=0.01", "--limits.burst=1", "--limits.concurrency=2"}, nil, ""},
		{"the default spelled out", []string{"--limits.rate=100", "--limits.burst=1000", "--limits.concurrency=32"}, nil, ""},
		{"from the environment", nil, []string{"SKILLSVC_LIMITS_RATE=0"}, "SKILLSVC_LIMITS_RATE=0"},
		{"environment, concurrency", nil, []string{"SKILLSVC_LIMITS_CONCURRENCY=0"}, "SKILLSVC_LIMITS_CONCURRENCY=0"},
		{"other limits flags", []string{"--limits.max-tracked-users=1", "--limits.reload-interval=1s"}, nil, ""},
		{"after another flag's value", []string{"--s3.bucket", "b", "--limits.rate=0"}, nil, "--limits.rate=0"},
		{"after the flags end", []string{"--", "--limits.rate=0"}, nil, ""},
		{"malformed, refused by the binary", []string{"--limits.rate=lots"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LiftedLimit(tc.args, tc.env); got != tc.want {
				t.Errorf("LiftedLimit(%q, %q) = %q, want %q", tc.args, tc.env, got, tc.want)
			}
		})
	}
}

// TestLiftedLimitInConfigFile: a config file is a third way to lift a
// limit, nested or with a dotted key, named by a flag or the environment.
func TestLiftedLimitInConfigFile(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nested := file("nested.yaml", "storage: s3\nlimits:\n  rate: 0\n")
	dotted := file("dotted.yaml", "limits.concurrency: 64\n")
	lowered := file("lowered.yaml", "limits:\n  rate: 1\n  burst: 2\n  concurrency: 1\n")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"nested", []string{"--config.file=" + nested}, nil, nested + ": limits.rate: 0"},
		{"dotted key", []string{"--config.file", dotted}, nil, dotted + ": limits.concurrency: 64"},
		{"named by the environment", nil, []string{"SKILLSVC_CONFIG_FILE=" + nested}, nested + ": limits.rate: 0"},
		{"lowered", []string{"--config.file=" + lowered}, nil, ""},
		{"missing, refused by the binary", []string{"--config.file=" + filepath.Join(dir, "none.yaml")}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LiftedLimit(tc.args, tc.env); got != tc.want {
				t.Errorf("LiftedLimit(%q, %q) = %q, want %q", tc.args, tc.env, got, tc.want)
			}
		})
	}
}

// TestRunSkillsvcKeepsLimits: RunSkillsvc (behind cmd/testenv and
// cmd/bench-load) refuses to lift a per-user limit unless told why.
func TestRunSkillsvcKeepsLimits(t *testing.T) {
	c := SkillsvcConfig{Bin: "/nonexistent/skillsvc", Args: []string{"--limits.concurrency=0"}, Dir: t.TempDir()}
	_, err := RunSkillsvc(t.Context(), c, 0)
	if err == nil || !strings.Contains(err.Error(), "LiftLimits") {
		t.Errorf("RunSkillsvc with --limits.concurrency=0 = %v, want a refusal naming LiftLimits", err)
	}
	c.LiftLimits = "a load generator"
	_, err = RunSkillsvc(t.Context(), c, 0)
	if err == nil || !strings.Contains(err.Error(), "start skillsvc") {
		t.Errorf("RunSkillsvc with LiftLimits = %v, want it to try to start the binary", err)
	}
}
