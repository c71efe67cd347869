package scan

import (
	"fmt"
	"net/netip"
	"strings"
)

const shells = `(sudo\s+)?(-\S+\s+)*(env\s+)?(ba|z|da|k|fi|c|tc)?sh\b|(sudo\s+)?(python[0-9.]*|perl|ruby|node|php|iex|Invoke-Expression)\b`

// The script patterns run over every text file, prose included: a SKILL.md
// that tells the agent to run `curl ... | sh` is as dangerous as a script
// that does.
var scriptPatterns = []pattern{
	{RuleDownload, compileLater(`(?i)\b(curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^|\n]*\|\s*` + `(` + shells + `)`),
		// An interpreter given its program inline (python3 -c, node -e)
		// reads the download as data, not as code.
		"pipes a download into an interpreter", []string{"curl", "wget", "fetch", "iwr", "irm", "invoke-"}, []string{"-c", "-e", "--eval", "-r"}},
	{RuleDownload, compileLater(`(?i)(\b(eval|exec|source)\s+|\b(ba|z|k)?sh\s+(-c\s+)?|(^|[\s;&|])\.\s+)["']?\s*[<$]\(\s*(curl|wget)\b`),
		"runs the output of a download", []string{"curl", "wget"}, nil},
	{RuleDownload, compileLater(`\b(exec|eval)\s*\(\s*[^\n]{0,60}\b(urlopen|requests\.get|httpx\.get|urllib\.request\.urlopen|fetch)\s*\(`),
		"runs code fetched from the network", []string{"exec", "eval"}, nil},
	{RuleEncoded, compileLater(`(?i)\b(exec|eval|compile)\s*\(\s*[^\n]{0,40}\b(b64decode|b32decode|a85decode|decodebytes|codecs\.decode|zlib\.decompress|gzip\.decompress|bz2\.decompress|lzma\.decompress|marshal\.loads|bytes\.fromhex|unhexlify|atob|Buffer\.from)\s*\(`),
		"decodes a payload and runs it", []string{"exec", "eval", "compile"}, nil},
	{RuleEncoded, compileLater(`(?i)\b(base64\s+(-d|--decode|-D)|xxd\s+-r|openssl\s+(enc\s+)?-?base64\s+-d)\b[^|\n]*\|\s*(` + shells + `)`),
		"pipes a decoded payload into an interpreter", []string{"base64", "xxd"}, nil},
	{RuleEncoded, compileLater(`(?i)\beval\s+["']?\$\(\s*(echo|printf)\b[^)\n]*\|\s*(base64|xxd)\b`),
		"evaluates a decoded payload", []string{"eval"}, nil},
	{RuleEncoded, compileLater(`(?i)\b(powershell|pwsh)(\.exe)?\b[^\n]*\s-e(nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16,}`),
		"runs a base64-encoded PowerShell command", []string{"powershell", "pwsh"}, nil},
	{RuleWrite, compileLater(`(?i)(>>?|\btee\s+(-a\s+)?)\s*["']?` + outsidePath),
		"writes outside the skill and workspace", outsideWords, nil},
	{RuleWrite, compileLater(`(?i)\b(cp|mv|install|ln)\s[^\n;|&]*\s["']?` + outsidePath + `[^\s;|&]*["']?\s*($|[;|&])`),
		"copies into a place outside the skill and workspace", outsideWords, nil},
	{RuleWrite, compileLater(`(?i)\b(open|write_text|write_bytes|writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream)\s*\([^\n]{0,80}` + outsidePath + `[^\n]{0,80}(["'](w|a|wb|ab|a\+|w\+)["']|\)\s*\.\s*write)|\bPath\([^\n]{0,80}` + outsidePath + `[^\n]{0,80}\)\s*\.\s*write_(text|bytes)\(|\b(writeFile|writeFileSync|appendFile|appendFileSync)\s*\([^\n,]{0,80}` + outsidePath),
		"writes a file outside the skill and workspace", outsideWords, nil},
	{RuleWrite, compileLater(`\|\s*crontab\b|\bcrontab\s+(-\s*($|[<;|&])|[\w.~/-]*[./][\w.~/-]*\s*($|[;|&]))`),
		"installs a crontab entry", []string{"crontab"}, nil},
	{RuleWrite, compileLater(`(?i)\bsed\s+-i\S*\s[^\n]*\s["']?` + outsidePath),
		"edits a file outside the skill and workspace", []string{"sed"}, nil},
}

// outsideWords are outsidePath's words, for the line prefilter.
var outsideWords = []string{"~", "$home", "${home}", "%userprofile%", "/root", "/home/", "/etc/", "/var/spool/cron", "/library/launch", "/usr/", "authorized_keys"}

// outsidePath: files that make a change outlive the run or reach other
// programs: shell start-up files, SSH keys, system configuration, login
// items.
const outsidePath = `((~|\$HOME|\$\{HOME\}|%USERPROFILE%|/root|/home/[^/\s"']+)/(\.(ssh|bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|config/autostart|config/fish/config\.fish|aws|gitconfig|npmrc|pypirc|docker|kube)\b|Library/LaunchAgents)|/etc/|/var/spool/cron|/Library/Launch(Agents|Daemons)|/usr/(local/)?s?bin/|\bauthorized_keys\b)`

// rawIPWords: besides "://", what rawIPRE needs on a line.
var rawIPWords = []string{"nc", "telnet", "socat", "connect"}

var (
	// A URL or a connection to a dotted-quad address.
	rawIPRE  = compileLater(`(?i)\b(?:https?|ftp|wss?|tcp|udp)://((?:\d{1,3}\.){3}\d{1,3})\b|\b(?:nc|ncat|netcat|telnet|socat)\b[^\n]*?\b((?:\d{1,3}\.){3}\d{1,3})\b|\bconnect\s*\(\s*\(\s*["']((?:\d{1,3}\.){3}\d{1,3})["']`)
	devTCPRE = compileLater(`/dev/(?:tcp|udp)/((?:\d{1,3}\.){3}\d{1,3})/`)
	// A long base64 (or hex) literal; a literal's quotes bound it.
	blobRE = compileLater(`["'][A-Za-z0-9+/]{200,}={0,2}["']|["'](?:[0-9a-fA-F]{2}){128,}["']`)
)

// scriptSeverity: a script rule's finding in prose (Markdown, text) is
// medium at most: documentation shows install and setup commands
// (curl … | sh, tee /etc/…) for a person to read; the same line in a
// script runs as it stands.
func (t *text) scriptSeverity(rule string) Severity { return t.proseCap(severityOf(rule)) }

func (t *text) proseCap(s Severity) Severity {
	if !t.script && t.prose && s == High {
		return Medium
	}
	return s
}

// scripts runs the script patterns and the raw-IP and blob checks.
func scripts(c *collector, t *text) {
	for i := range t.lines {
		l := t.line(i)
		lower := strings.ToLower(l)
		for _, p := range scriptPatterns {
			if m, _ := p.match(l, lower); m != "" {
				c.add(Finding{Rule: p.rule, Severity: t.scriptSeverity(p.rule), File: t.path, Line: i + 1,
					Message: fmt.Sprintf("%s: %q", p.what, clip(m, 100))})
			}
		}
		if t.script && len(l) >= 200 && blobRE().MatchString(l) {
			c.add(Finding{Rule: RuleBlob, Severity: Low, File: t.path, Line: i + 1,
				Message: "a long base64 or hex literal: data no reviewer reads"})
		}
		if !strings.ContainsAny(l, "0123456789") {
			continue // no address
		}
		if strings.Contains(l, "/dev/") {
			for _, m := range devTCPRE().FindAllStringSubmatch(l, 4) {
				if a, err := netip.ParseAddr(m[1]); err == nil && !a.IsLoopback() {
					c.add(Finding{Rule: RuleRawIP, Severity: t.proseCap(High), File: t.path, Line: i + 1,
						Message: fmt.Sprintf("opens a raw socket to %s through /dev/tcp: a reverse shell's shape", a)})
				}
			}
		}
		if !strings.Contains(l, "://") && !containsAny(lower, rawIPWords) {
			continue
		}
		for _, m := range rawIPRE().FindAllStringSubmatch(l, 4) {
			addr := m[1] + m[2] + m[3]
			if sev, why := rawIPSeverity(addr); sev != "" {
				c.add(Finding{Rule: RuleRawIP, Severity: t.proseCap(sev), File: t.path, Line: i + 1,
					Message: fmt.Sprintf("connects to the raw IP address %s%s", addr, why)})
			}
		}
	}
}

// metadataAddr is the cloud instance metadata service, where instance
// credentials are served.
var metadataAddr = netip.MustParseAddr("169.254.169.254")

// documentation ranges (RFC 5737) appear in examples.
var docPrefixes = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24"),
}

// rawIPSeverity: local and private addresses are a skill's own servers
// (webapp testing on localhost); public ones skip DNS, as malware does.
func rawIPSeverity(s string) (Severity, string) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", ""
	}
	if a == metadataAddr {
		return High, " (the cloud metadata service, which serves instance credentials)"
	}
	if a.IsLoopback() || a.IsUnspecified() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() {
		return "", ""
	}
	for _, p := range docPrefixes {
		if p.Contains(a) {
			return "", ""
		}
	}
	return Medium, ""
}
