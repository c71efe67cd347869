package scan

import "slices"

// Rule is one check a finding names: its stable id, the severity its
// findings carry by default, and what it looks for.
type Rule struct {
	ID       string
	Severity Severity
	Summary  string
}

// The rules of our own families. Ids are stable: policies, stored reports
// and SARIF consumers refer to them. A secret's rule is "secret/" + its
// gitleaks id (SecretRules lists them).
const (
	RuleOverride  = "injection/override"
	RuleConceal   = "injection/conceal"
	RuleExfil     = "injection/exfiltrate"
	RuleTags      = "hidden-text/unicode-tags"
	RuleBidi      = "hidden-text/bidi-control"
	RuleZeroWidth = "hidden-text/zero-width"
	RuleComment   = "hidden-text/html-comment"
	RuleUnshown   = "hidden-text/unrendered-frontmatter"
	RuleDownload  = "script/download-exec"
	RuleEncoded   = "script/encoded-exec"
	RuleBlob      = "script/encoded-blob"
	RuleWrite     = "script/write-outside"
	RuleRawIP     = "script/raw-ip"
	RuleFakeText  = "binary/disguised-text"
	RuleExec      = "binary/executable"
	// RuleURLPassword: gitleaks' default rules have no rule for a
	// password in a URL (a database or broker DSN).
	RuleURLPassword = "secret/url-password"
	// RuleIncomplete: a limit or the timeout ended the scan early.
	RuleIncomplete = "scan/incomplete"
	secretPrefix   = "secret/"
)

var ownRules = []Rule{
	{RuleOverride, High, "Instructions that tell the agent to ignore or override its previous instructions, rules or system prompt"},
	{RuleConceal, High, "Instructions to hide what the agent does from the user"},
	{RuleExfil, High, "Instructions or commands that send secrets, credentials, keys or the environment to another party"},
	{RuleTags, High, "Unicode tag characters (U+E0000-E007F): text invisible to a reader that models still read"},
	{RuleBidi, High, "Bidirectional control characters (U+202A-202E, U+2066-2069) that make text read differently than it runs"},
	{RuleZeroWidth, High, "Zero-width characters (U+200B-200D, U+2060, U+FEFF after the start): high for a run of them, which can carry hidden data, low for one"},
	{RuleComment, Medium, "An HTML comment in Markdown (not shown when rendered) holding instructions to the agent"},
	{RuleUnshown, Medium, "A SKILL.md frontmatter field the prompt block does not show (only name and description are) holding instructions to the agent"},
	{RuleDownload, High, "Code downloaded and run in one step (curl|sh, eval \"$(curl ...)\", exec(urlopen(...).read()))"},
	{RuleEncoded, High, "An encoded payload decoded and run (exec(base64.b64decode(...)), base64 -d | sh, powershell -enc)"},
	{RuleBlob, Low, "A long base64 or hex literal in a script"},
	{RuleWrite, High, "A script writing outside the skill and workspace: shell start-up files, ~/.ssh, /etc, crontab, launch agents"},
	{RuleRawIP, Medium, "A network call to a raw public IP address (high for a reverse shell through /dev/tcp or the cloud metadata address)"},
	{RuleFakeText, High, "A file named as text (.md, .py, .sh, .txt, ...) whose bytes are binary"},
	{RuleExec, High, "A native executable (ELF, PE, Mach-O) in a skill"},
	{RuleURLPassword, High, "A URL carrying a password (scheme://user:password@host), such as a database connection string, outside loopback and example hosts"},
	{RuleIncomplete, Medium, "The scan stopped at a limit (files, bytes, time) before reading every file"},
}

// Rules lists every rule: ours, then gitleaks' secret rules by id.
func Rules() []Rule {
	return append(slices.Clone(ownRules), SecretRules()...)
}

// RuleByID finds a rule of Rules.
func RuleByID(id string) (Rule, bool) {
	for _, r := range ownRules {
		if r.ID == id {
			return r, true
		}
	}
	for _, r := range SecretRules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

func severityOf(id string) Severity {
	for _, r := range ownRules {
		if r.ID == id {
			return r.Severity
		}
	}
	return High
}
