package scan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// pattern is one regular expression of a rule, with what a match means.
type pattern struct {
	rule string
	re   func() *regexp.Regexp
	what string
	// anyOf: lower-case words of which a matching line holds one; a line
	// holding none skips the expression (Go's regular expressions are
	// linear but not fast, and most lines hold none).
	anyOf []string
	// notBefore: words that, right after a match, make it something else
	// ("do not tell the user to rerun it" tells the user nothing less).
	notBefore []string
}

// match is the pattern's match in line (lower: the line in lower case)
// and whether it stands in quotes: a phrase quoted, as a skill about
// prompt injection quotes one, is mentioned rather than said.
func (p pattern) match(line, lower string) (m string, quoted bool) {
	if len(p.anyOf) > 0 && !containsAny(lower, p.anyOf) {
		return "", false
	}
	loc := p.re().FindStringIndex(line)
	if loc == nil {
		return "", false
	}
	if len(p.notBefore) > 0 {
		next := strings.Fields(lower[loc[1]:])
		if len(next) > 0 && slices.Contains(p.notBefore, strings.Trim(next[0], ".,;:!?")) {
			return "", false
		}
	}
	before := strings.TrimRight(line[:loc[0]], " ")
	quoted = strings.HasSuffix(before, `"`) || strings.HasSuffix(before, "'") || strings.HasSuffix(before, "`") || strings.HasSuffix(before, "“")
	return line[loc[0]:loc[1]], quoted
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// The injection phrasings. They name the act (ignore the instructions
// before, keep it from the user, send the keys away), not the tone: public
// skills rightly say "always", "must" and "never".
var instructionPatterns = []pattern{
	{RuleOverride, compileLater(`(?i)\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+|of\s+)*(previous|prior|above|earlier|preceding|original|system|safety|developer|other)\s+(instructions?|prompts?|rules|directions|guidelines|directives|messages|context)\b`),
		"tells the agent to ignore its instructions", []string{"ignore", "disregard", "forget", "override", "bypass"}, nil},
	{RuleOverride, compileLater(`(?i)\byou\s+are\s+no\s+longer\s+(bound|restricted|limited|required|an?\s+(ai|assistant))\b|\b(enter|enable|activate|switch\s+to)\s+(god|dan|jailbreak|unrestricted|unfiltered)\s+mode\b|\bnew\s+system\s+prompt\s*:`),
		"tries to replace the agent's instructions", []string{"no longer", "mode", "system prompt"}, nil},
	{RuleConceal, compileLater(`(?i)\b(do\s+not|don't|never)\s+(tell|inform|notify|alert|warn|mention\s+(this|it|that)\s+to|reveal\s+(this|it|that)\s+to|show\s+(this|it|that)\s+to)\s+(the\s+)?user\b`),
		"tells the agent to keep something from the user", []string{"user"}, []string{"to", "how", "where", "which"}},
	{RuleConceal, compileLater(`(?i)\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?user\b|\b(hide|conceal)\s+(this|these|it|that)\s+(action\s+|step\s+)?from\s+(the\s+)?user\b|\bkeep\s+(this|it)\s+(secret|hidden)\s+from\s+(the\s+)?user\b`),
		"tells the agent to act behind the user's back", []string{"user"}, nil},
	{RuleExfil, compileLater(`(?i)\b(send|post|upload|forward|exfiltrate|transmit|leak|e-?mail|paste)\b[^\n]{0,80}?\b(secrets?|credentials?|api[\s_-]?keys?|access\s+tokens?|passwords?|env(ironment)?\s+var(iable)?s?|\.env\s+files?|ssh\s+keys?|private\s+keys?|cookies|session\s+tokens?)\b[^\n]{0,80}?\bto\s+(https?://|[a-z0-9.-]+\.[a-z]{2,}/|(this|that|the\s+following|our|my)\s+(url|webhook|endpoint|server|address))`),
		"tells the agent to send secrets away", []string{"send", "post", "upload", "forward", "exfiltrate", "transmit", "leak", "mail", "paste"}, nil},
}

// networkRE is a command that talks to the network; secretSourceRE reads
// secrets in bulk: key files, credential stores, the whole environment. A
// single variable in a header (curl -H "x-api-key: $ANTHROPIC_API_KEY", as
// API documentation does) is neither bulk nor flagged.
var (
	networkRE      = compileLater(`(?i)\b(curl|wget|nc|ncat|netcat|socat|scp|rsync|ftp|requests\.(post|put|get|request)|urlopen|urllib\.request|http\.client|httpx\.(post|put|get)|axios|fetch|XMLHttpRequest|Invoke-WebRequest|Invoke-RestMethod|smtplib)\b|/dev/tcp/`)
	secretSourceRE = compileLater(`(?i)(~|\$HOME|\$\{HOME\}|/root|/home/[^/\s]+)/\.(ssh|aws|netrc|git-credentials|docker/config\.json|kube/config|gnupg|config/gcloud)\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|/etc/shadow\b|\bprintenv\b|\$\(\s*env\s*\)|` + "`env`" + `|\b(json\.dumps|str|repr|dict)\(\s*(dict\(\s*)?os\.environ\s*\)|\b(data|json|params)\s*=\s*(dict\(\s*)?os\.environ\b|JSON\.stringify\(\s*process\.env\s*\)|\b(body|data)\s*:\s*process\.env\s*[,}]|\bcat\s+[^|;\n]*\.env\b|\bsecurity\s+find-(generic|internet)-password\b|Login\s+Data\b`)
)

// The words networkRE and secretSourceRE need, for the line prefilter.
var (
	networkWords      = []string{"curl", "wget", "nc", "cat", "socat", "scp", "rsync", "ftp", "requests.", "url", "http", "axios", "fetch", "xmlhttprequest", "invoke-", "smtplib", "/dev/tcp/"}
	secretSourceWords = []string{"/.", "id_", "/etc/shadow", "printenv", "env", "security", "login data"}
)

// instructions runs the injection phrasings over every line of every text
// file (the agent may read any of them), and the exfiltration check: a
// line that reads secrets in bulk and sends over the network, or, in a
// script, a file that does both.
func instructions(c *collector, t *text) {
	netLine, srcLine := 0, 0
	for i := range t.lines {
		l := t.line(i)
		lower := strings.ToLower(l)
		for _, p := range instructionPatterns {
			m, quoted := p.match(l, lower)
			switch {
			case m == "":
			case quoted:
				c.add(Finding{Rule: p.rule, Severity: Low, File: t.path, Line: i + 1,
					Message: fmt.Sprintf("quotes a phrase that %s: %q", p.what, clip(m, 100))})
			default:
				c.add(Finding{Rule: p.rule, Severity: severityOf(p.rule), File: t.path, Line: i + 1,
					Message: fmt.Sprintf("%s: %q", p.what, clip(m, 100))})
			}
		}
		net := containsAny(lower, networkWords) && networkRE().MatchString(l)
		src := ""
		if containsAny(lower, secretSourceWords) {
			src = secretSourceRE().FindString(l)
		}
		if net && src != "" {
			c.add(Finding{Rule: RuleExfil, Severity: High, File: t.path, Line: i + 1,
				Message: fmt.Sprintf("reads %q and sends over the network on the same line", clip(src, 60))})
			continue
		}
		if net && netLine == 0 {
			netLine = i + 1
		}
		if src != "" && srcLine == 0 {
			srcLine = i + 1
		}
	}
	if t.script && netLine > 0 && srcLine > 0 {
		c.add(Finding{Rule: RuleExfil, Severity: High, File: t.path, Line: srcLine,
			Message: fmt.Sprintf("the script reads secrets in bulk here and sends over the network at line %d", netLine)})
	}
}

// compileLater compiles expr on first use: compiling every rule's
// expression costs about 10 ms, which a skillctl command that never scans
// should not pay at start-up.
func compileLater(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
