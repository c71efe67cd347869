package main

import (
	"hash/fnv"
	"regexp"
	"strings"
	"unicode"
)

// The harness decides which skills are copies of a request's target itself,
// from the texts, so that what counts as a hit does not depend on the system
// under test: a copy has the same frontmatter name and a body whose word
// shingles overlap the target's by copyJaccard or more, or the same body,
// normalized, under any name.
const (
	copyJaccard = 0.9
	shingleSize = 3
)

// fingerprint is what the copy test reads of one SKILL.md.
type fingerprint struct {
	name string // frontmatter name, lower case
	body string // the body's words, lower case, one space apart
}

var frontmatterName = regexp.MustCompile(`(?m)^name:[ \t]*(.*?)[ \t]*$`)

func fingerprintOf(text []byte) fingerprint {
	s := strings.ReplaceAll(string(text), "\r\n", "\n")
	var fm, body string
	if rest, ok := strings.CutPrefix(s, "---\n"); ok {
		if i := strings.Index(rest, "\n---"); i >= 0 {
			fm, body = rest[:i], rest[i+4:]
		} else {
			body = s
		}
	} else {
		body = s
	}
	var name string
	if m := frontmatterName.FindStringSubmatch(fm); m != nil {
		name = strings.ToLower(strings.Trim(m[1], `"'`))
	}
	words := strings.FieldsFunc(strings.ToLower(body), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return fingerprint{name: name, body: strings.Join(words, " ")}
}

func shingles(body string) map[uint64]bool {
	words := strings.Fields(body)
	// a body shorter than a shingle is one shingle
	n := max(len(words)-shingleSize+1, min(len(words), 1))
	out := make(map[uint64]bool, n)
	for i := range n {
		h := fnv.New64a()
		for _, w := range words[i:min(i+shingleSize, len(words))] {
			h.Write([]byte(w))
			h.Write([]byte{0})
		}
		out[h.Sum64()] = true
	}
	return out
}

func jaccard(a, b map[uint64]bool) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter := 0
	for k := range a {
		if b[k] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// copiesOf returns, for each target folder, the folders of the library that
// count as it: itself and its copies.
func copiesOf(lib []skill, targets []string) map[string]map[string]bool {
	fps := make([]fingerprint, len(lib))
	index := map[string]int{}
	for i, s := range lib {
		fps[i] = fingerprintOf(s.Text)
		index[s.Dir] = i
	}
	out := map[string]map[string]bool{}
	for _, t := range targets {
		ok := map[string]bool{t: true}
		out[t] = ok
		ti, found := index[t]
		if !found {
			continue
		}
		tf := fps[ti]
		var tsh map[uint64]bool
		for i, f := range fps {
			if i == ti {
				continue
			}
			switch {
			case f.body == tf.body && f.body != "":
				ok[lib[i].Dir] = true
			case f.name != "" && f.name == tf.name:
				if tsh == nil {
					tsh = shingles(tf.body)
				}
				if jaccard(tsh, shingles(f.body)) >= copyJaccard {
					ok[lib[i].Dir] = true
				}
			}
		}
	}
	return out
}
