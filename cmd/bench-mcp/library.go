package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// A generated skills library shaped like a real one: skills in category
// folders, each a SKILL.md with the frontmatter the Agent Skills
// specification defines and a few KiB of instructions, plus two or three
// small files under references/ and scripts/.

// categoryWords and actionWords name categories and the skills in them
// (<category>-<action>); past the end of a list a number is added.
var categoryWords = []string{
	"finance", "legal", "hr", "sales", "marketing", "support", "security", "compliance", "devops", "frontend",
	"backend", "mobile", "data", "analytics", "ml", "docs", "design", "research", "procurement", "logistics",
	"billing", "payroll", "recruiting", "onboarding", "incident", "release", "qa", "infra", "network", "database",
	"observability", "privacy", "audit", "tax", "treasury", "partnerships", "localization", "accessibility", "seo", "content",
	"community", "events", "facilities", "it", "vendor", "risk", "strategy", "product", "growth", "platform",
}

var actionWords = []string{
	"report", "review", "checklist", "summary", "triage", "migration", "forecast", "reconcile", "template", "audit",
	"handoff", "runbook", "postmortem", "dashboard", "changelog", "extract", "validate", "estimate", "outline", "playbook",
}

// skillFile is one file of a skill, by its path in the skill's folder.
type skillFile struct {
	rel  string
	body []byte
}

// skill is one generated skill: files[0] is its SKILL.md.
type skill struct {
	category, action, name string
	files                  []skillFile
}

func (s skill) dir() string { return s.category + "/" + s.name }

// uri is the skill:// URI of one of its files, as the extension names it
// (every generated segment is URL-safe).
func (s skill) uri(rel string) string { return "skill://" + s.dir() + "/" + rel }

func word(words []string, i int) string {
	if i < len(words) {
		return words[i]
	}
	return fmt.Sprintf("%s%d", words[i%len(words)], i/len(words)+1)
}

// newLibrary generates categories × perCategory skills.
func newLibrary(categories, perCategory int) []skill {
	lib := make([]skill, 0, categories*perCategory)
	for c := range categories {
		cat := word(categoryWords, c)
		for a := range perCategory {
			i := len(lib)
			act := word(actionWords, a)
			s := skill{category: cat, action: act, name: cat + "-" + act}
			s.files = append(s.files, skillFile{"SKILL.md", skillMD(s, i)})
			s.files = append(s.files, skillFile{"references/guide.md", guideMD(s, i)})
			s.files = append(s.files, skillFile{"scripts/" + act + ".py", script(s)})
			if i%2 == 0 {
				s.files = append(s.files, skillFile{"references/examples.md", examplesMD(s)})
			}
			lib = append(lib, s)
		}
	}
	return lib
}

func skillMD(s skill, i int) []byte {
	action := s.action
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\n", s.name)
	fmt.Fprintf(&b, "description: Produces a %s %s from the files in the workspace, following the team's conventions. "+
		"Use when the user asks for a %s %s, wants one reviewed, or needs the numbers in it checked against the sources.\n",
		s.category, action, s.category, action)
	b.WriteString("license: Apache-2.0\n")
	b.WriteString("compatibility: Requires Python 3.11+; reads files from the workspace only.\n")
	fmt.Fprintf(&b, "allowed-tools: Read Grep Glob Bash(python3 scripts/%s.py:*)\n", action)
	fmt.Fprintf(&b, "metadata:\n  author: %s-team\n  version: \"%d.%d.%d\"\n  tags: %s, %s\n---\n", s.category, 1+i%3, i%10, i%7, s.category, action)
	fmt.Fprintf(&b, "# %s %s\n\n## When to use\n\nUse this skill for any %s %s. It assumes the inputs are in the workspace "+
		"and that the result goes into a ticket or a shared document.\n\n## Workflow\n\n", strings.ToUpper(s.category[:1])+s.category[1:], action, s.category, action)
	for step := 1; step <= 12; step++ {
		fmt.Fprintf(&b, "%d. Step %d: read the relevant inputs, note anything unusual in a short list, keep the user's "+
			"wording where they wrote it, and never invent a value that is not in the sources.\n", step, step)
	}
	fmt.Fprintf(&b, "\n## Files\n\n- `references/guide.md`: the conventions, read it before the first draft.\n"+
		"- `scripts/%s.py`: checks the draft (`python3 scripts/%s.py draft.md`).\n", action, action)
	if i%2 == 0 {
		b.WriteString("- `references/examples.md`: two finished examples.\n")
	}
	b.WriteString("\n## Output\n\nA markdown document with a title, a three-line summary, the body, and a list of open questions.\n\n" +
		"Arguments, when given: $ARGUMENTS\n")
	return b.Bytes()
}

func guideMD(s skill, i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Conventions for %s\n\n", s.name)
	for n := 1; n <= 16; n++ {
		fmt.Fprintf(&b, "- Rule %d.%d: prefer short sentences, name the file you changed, link the ticket, and date every figure.\n", i%50, n)
	}
	return b.Bytes()
}

func script(s skill) []byte {
	return fmt.Appendf(nil, `#!/usr/bin/env python3
"""Checks a %[1]s draft: required sections present, no empty headings."""
import sys

REQUIRED = ["# ", "## Summary", "## Open questions"]


def main(path: str) -> int:
    text = open(path, encoding="utf-8").read()
    missing = [s for s in REQUIRED if s not in text]
    for s in missing:
        print(f"%[1]s: missing {s!r}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
`, s.name)
}

func examplesMD(s skill) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Examples for %s\n\n", s.name)
	for n := 1; n <= 2; n++ {
		fmt.Fprintf(&b, "## Example %d\n\nInput: three spreadsheets and a thread of comments.\n\n"+
			"Output: a one-page document with a summary, a table of figures with their sources, and two open questions.\n\n", n)
	}
	return b.Bytes()
}

// libraryBytes is the size of every file of lib.
func libraryBytes(lib []skill) (files int, bytes int64) {
	for _, s := range lib {
		for _, f := range s.files {
			files++
			bytes += int64(len(f.body))
		}
	}
	return files, bytes
}

// seed uploads lib under prefix with workers uploads in flight.
func seed(ctx context.Context, c *s3.Client, bucket, prefix string, lib []skill, workers int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for _, s := range lib {
		for _, f := range s.files {
			key := prefix + s.dir() + "/" + f.rel
			g.Go(func() error {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(f.body)})
				if err != nil {
					return fmt.Errorf("put %s: %w", key, err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// resource is a file as the extension lists it.
type resource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// expected is what skills/list and skills/get must say of each skill: its
// resources by URI, keyed by the SKILL.md URI.
func expected(lib []skill) map[string]map[string]resource {
	out := make(map[string]map[string]resource, len(lib))
	for _, s := range lib {
		rs := make(map[string]resource, len(s.files))
		for _, f := range s.files {
			sum := sha256.Sum256(f.body)
			u := s.uri(f.rel)
			rs[u] = resource{URI: u, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(f.body))}
		}
		out[s.uri("SKILL.md")] = rs
	}
	return out
}
