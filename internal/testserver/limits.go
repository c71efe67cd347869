package testserver

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/skillsvc/skillsvc/internal/quota"
)

// Tests of the binary run with the per-user limits a deployment gets: a
// default that breaks a normal client is a bug to fix, not a setting for the
// test to change. LiftedLimit lets every launcher of the binary for tests
// refuse a flag or variable that turns a limit off or raises it; a process
// that must run without the limits says why (SkillsvcConfig.LiftLimits).

// liftLimitsArgs turn the per-user limits off.
var liftLimitsArgs = []string{"--limits.rate=0", "--limits.concurrency=0"}

// LiftedLimit returns the first of args (skillsvc's flags), env (its
// environment, where SKILLSVC_LIMITS_RATE sets --limits.rate) and the config
// file they name (--config.file or SKILLSVC_CONFIG_FILE, read from the
// current directory when relative) that turns a per-user limit off or raises
// it above its default, or "" when none does. Lowering a limit, as a test of
// the limits does, is not lifting it.
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
	configFile := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // the flag package stops here too
		}
		if !strings.HasPrefix(a, "-") {
			continue // another flag's value, as in "--s3.bucket b"
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !hasValue && (lifts[name] != nil || name == "config.file") && i+1 < len(args) {
			i++
			value, a = args[i], a+" "+args[i]
		}
		if name == "config.file" {
			configFile = value
		}
		if lifted(name, value) {
			return a
		}
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if name == "SKILLSVC_CONFIG_FILE" && configFile == "" {
			configFile = value
		}
		flag, ok := strings.CutPrefix(name, "SKILLSVC_")
		if ok && lifted(strings.Replace(strings.ToLower(flag), "_", ".", 1), value) {
			return kv
		}
	}
	if configFile == "" {
		return ""
	}
	data, err := os.ReadFile(configFile)
	if err != nil {
		return "" // the binary refuses a file it cannot read
	}
	var doc map[string]any
	if yaml.Unmarshal(data, &doc) != nil {
		return "" // and a file it cannot parse
	}
	for name := range lifts {
		if v, ok := lookup(doc, name); ok && lifted(name, fmt.Sprint(v)) {
			return configFile + ": " + name + ": " + fmt.Sprint(v)
		}
	}
	return ""
}

// lookup finds an option in a decoded config file, nested at each "." or
// written with the dots in one key.
func lookup(doc map[string]any, name string) (any, bool) {
	if v, ok := doc[name]; ok {
		return v, true
	}
	for i := range len(name) {
		if name[i] != '.' {
			continue
		}
		if sub, ok := doc[name[:i]].(map[string]any); ok {
			if v, ok := lookup(sub, name[i+1:]); ok {
				return v, true
			}
		}
	}
	return nil, false
}
