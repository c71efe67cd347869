package testserver

import (
	"strconv"
	"strings"

	"github.com/skillsvc/skillsvc/internal/quota"
)

// Tests of the binary run with the per-user limits a deployment gets: a
// default that breaks a normal client is a bug to fix, not a setting for the
// test to change. LiftedLimit lets every launcher of the binary for tests
// refuse a flag or variable that turns a limit off or raises it; a process
// that must run without the limits says why (SkillsvcConfig.LiftLimits).

// liftLimitsArgs turn the per-user limits off.
var liftLimitsArgs = []string{"--limits.rate=0", "--limits.concurrency=0"}

// LiftedLimit returns the first of args (skillsvc's flags) and env (its
// environment, where SKILLSVC_LIMITS_RATE sets --limits.rate) that turns a
// per-user limit off or raises it above its default, or "" when none does.
// Lowering a limit, as a test of the limits does, is not lifting it.
func LiftedLimit(args, env []string) string {
	def := quota.DefaultConfig()
	lifts := map[string]func(v float64) bool{
		"limits.rate":        func(v float64) bool { return v == 0 || v > def.Rate },
		"limits.burst":       func(v float64) bool { return v > float64(def.Burst) },
		"limits.concurrency": func(v float64) bool { return v == 0 || v > float64(def.Concurrency) },
	}
	lifted := func(name, value string) bool {
		v, err := strconv.ParseFloat(value, 64)
		return lifts[name] != nil && err == nil && lifts[name](v) // a malformed value stops the binary anyway
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // the flag package stops here too
		}
		if !strings.HasPrefix(a, "-") {
			continue // another flag's value, as in "--s3.bucket b"
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && lifts[name] != nil && i+1 < len(args) {
			i++
			value, a = args[i], a+" "+args[i]
		}
		if lifted(name, value) {
			return a
		}
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		flag, ok := strings.CutPrefix(name, "SKILLSVC_")
		if ok && lifted(strings.Replace(strings.ToLower(flag), "_", ".", 1), value) {
			return kv
		}
	}
	return ""
}
