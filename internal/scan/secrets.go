package scan

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// GitleaksVersion is the gitleaks module go.mod pins (a test holds them
// equal): its default rules are the secret rules.
const GitleaksVersion = "v8.30.1"

// secretDecodeDepth: gitleaks also decodes base64, hex and percent-encoded
// spans and runs every rule over the text again, this many times (its CLI
// default is 5). One pass catches a secret encoded once; each pass costs a
// full scan of files that hold encoded-looking spans (OOXML schemas do).
const secretDecodeDepth = 1

// detector builds gitleaks' detector from its default rules once (about
// 100 ms: some two hundred regular expressions) on first use, not at
// init, so binaries that never scan do not pay for it.
var detector = sync.OnceValues(func() (*detect.Detector, error) {
	// gitleaks logs through a package logger to stderr; a scan reports
	// through its findings only.
	logging.Logger = logging.Logger.Level(zerolog.Disabled)
	v := viper.New() // not viper's global instance, which detect.NewDetectorDefaultConfig uses
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, err
	}
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = secretDecodeDepth
	return d, nil
})

// SecretRules lists gitleaks' default rules as ours ("secret/" + its id),
// in id order.
func SecretRules() []Rule {
	d, err := detector()
	if err != nil {
		return nil
	}
	var out []Rule
	for _, r := range d.Config.GetOrderedRules() {
		out = append(out, Rule{ID: secretPrefix + r.RuleID, Severity: secretSeverity(r.RuleID), Summary: r.Description})
	}
	return out
}

// secretSeverity: every gitleaks rule names a kind of credential, high; its
// generic rules (an assignment to a name like api_key with a high-entropy
// value) also match documentation placeholders, medium.
func secretSeverity(id string) Severity {
	if strings.HasPrefix(id, "generic") {
		return Medium
	}
	return High
}

// placeholderRE: what documentation writes where a secret goes: a
// variable's name (YOUR_TOKEN, API_KEY), a template (<token>, ${TOKEN},
// {{key}}), "your-…", "example", runs of x or *.
var placeholderRE = compileLater(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^\$\{?[A-Za-z_]+\}?$|[<>{}]|(?i)your[-_ ]|example|placeholder|redacted|xxxx|\*\*\*\*|\.\.\.`)

// placeholder reports whether a matched secret is a placeholder, not a
// value (gitleaks' curl-auth-header rule matches "Bearer YOUR_TOKEN").
func placeholder(secret string) bool {
	return placeholderRE().MatchString(secret)
}

// secrets runs gitleaks over one file. Findings never carry the secret.
func secrets(ctx context.Context, c *collector, t *text) {
	d, err := detector()
	if err != nil {
		// The embedded rules always load; a failure is a broken build.
		panic(fmt.Sprintf("gitleaks rules: %v", err))
	}
	urlPasswords(c, t)
	found := d.DetectContext(ctx, detect.Fragment{Raw: string(t.data), FilePath: t.path})
	for _, f := range found {
		if placeholder(f.Secret) {
			continue
		}
		c.add(Finding{
			Rule:     secretPrefix + f.RuleID,
			Severity: secretSeverity(f.RuleID),
			File:     t.path,
			Line:     f.StartLine + 1, // gitleaks counts lines from 0
			Message:  fmt.Sprintf("%s (gitleaks rule %s)", f.Description, f.RuleID),
		})
	}
}

// urlPasswordRE: scheme://user:password@host.
var urlPasswordRE = compileLater(`\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'"]{1,64}:([^\s/@'"]{1,128})@([^\s/:'"?#]{1,253})`)

// commonPasswords are what examples write as a password.
var commonPasswords = []string{"password", "passwd", "pass", "secret", "changeme", "admin", "root", "postgres", "mysql", "guest", "test", "user", "pwd"}

// urlPasswords finds passwords in URLs, which gitleaks' default rules do
// not cover. Loopback and example hosts, placeholders and the passwords
// examples use are documentation, not secrets. Findings never carry the
// password.
func urlPasswords(c *collector, t *text) {
	for i := range t.lines {
		l := t.line(i)
		if !strings.Contains(l, "://") || !strings.Contains(l, "@") {
			continue
		}
		for _, m := range urlPasswordRE().FindAllStringSubmatch(l, 4) {
			pass, host := m[1], strings.ToLower(m[2])
			if len(pass) < 6 || placeholder(pass) || slices.Contains(commonPasswords, strings.ToLower(pass)) || strings.HasPrefix(pass, "$") || strings.HasPrefix(pass, "%") {
				continue
			}
			if host == "localhost" || strings.HasPrefix(host, "127.") || strings.Contains(host, "example") || host == "host" {
				continue
			}
			c.add(Finding{Rule: RuleURLPassword, Severity: High, File: t.path, Line: i + 1,
				Message: fmt.Sprintf("a URL with a password for %s", clip(host, 80))})
		}
	}
}
