package app_test

import (
	"flag"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/options"
)

// basicOptions are what a deployment usually sets: the options --help
// lists. Each is tagged basic where it is registered, so this list is the
// one place that says which they are, checked against the flags.
var basicOptions = []string{
	"config.file", "listen", "http.listen", "metrics.listen", "storage", "data-dir", "examples", "mounts", "log.level", "log.format",
	"auth.mode", "auth.jwt.secret-file", "auth.jwt.public-key-file", "auth.jwt.jwks-url", "auth.jwt.issuer", "auth.jwt.audience",
	"tls.cert-file", "tls.key-file", "tls.client-ca-file",
	"s3.bucket", "s3.endpoint", "s3.region", "s3.path-style",
	"cache.redis.addrs", "cache.redis.password", "cache.redis.key-prefix",
	"limits.rate", "limits.burst", "limits.concurrency",
	"events.sqs.queue-url", "events.webhook-token-file",
	"audit.output",
	"library.review",
	"library.require-signature",
	"library.signing-keys",
	"library.scan",
	"usage.enabled",
}

// appOwnBasic are the basic options app.Config registers itself rather
// than through a package's RegisterFlagsWithPrefix.
var appOwnBasic = []string{"config.file", "listen", "http.listen", "metrics.listen", "storage", "data-dir", "examples", "mounts", "log.level", "log.format"}

func TestCategories(t *testing.T) {
	f := flag.NewFlagSet("skillsvc", flag.ContinueOnError)
	var c app.Config
	c.RegisterFlags(f)

	basic, secret, experimental := map[string]bool{}, map[string]bool{}, map[string]bool{}
	f.VisitAll(func(fl *flag.Flag) {
		switch options.CategoryOf(fl) {
		case options.Basic:
			basic[fl.Name] = true
		case options.Experimental:
			experimental[fl.Name] = true
		}
		if options.IsSecret(fl) {
			secret[fl.Name] = true
		}
	})

	want := map[string]bool{}
	for _, n := range basicOptions {
		want[n] = true
	}
	// --config.file is read before the other flags; a flag set without it
	// has nothing to list.
	if f.Lookup("config.file") == nil {
		delete(want, "config.file")
	}
	// app tags the options it registers itself all at once: checked when
	// it tags any, the packages' always.
	if !slices.ContainsFunc(appOwnBasic, func(n string) bool { return basic[n] }) {
		for _, n := range appOwnBasic {
			delete(want, n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(want)) {
		if f.Lookup(n) == nil {
			t.Errorf("basic option --%s is not registered", n)
		} else if !basic[n] {
			t.Errorf("--%s is %v, want basic", n, options.CategoryOf(f.Lookup(n)))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(basic)) {
		if !want[n] {
			t.Errorf("--%s is basic, but not one of the basic options", n)
		}
	}

	if !secret["cache.redis.password"] {
		t.Error("--cache.redis.password is not a secret")
	}
	for n := range secret {
		fl := f.Lookup(n)
		// A default is printed and documented: a secret has none.
		if fl.DefValue != "" {
			t.Errorf("secret --%s has the default %q, want none", n, fl.DefValue)
		}
		// A file of a secret is named, not hidden: its path is no secret.
		if strings.HasSuffix(n, "-file") {
			t.Errorf("--%s names a file, whose path is no secret", n)
		}
	}

	if len(experimental) == 0 {
		t.Error("no option is experimental; want at least --search.embeddings.*")
	}
}
