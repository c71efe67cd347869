// Package scan checks a skill's files for what an agent should not be
// handed: instructions that try to override the agent or send data away,
// text a reader cannot see, committed secrets (gitleaks' rule set), scripts
// that download and run code, run encoded payloads, write outside the skill
// or call raw IP addresses, and binaries posing as text. It is pure: it reads
// only the bytes it is given, never runs them, and is bounded in files,
// bytes, line length and time, so the publish path, the library index and
// skillctl scan can all call Skill on untrusted uploads. Every finding
// carries a stable rule id, a severity, the file and the line; SARIF renders
// reports for code-scanning tools.
package scan
