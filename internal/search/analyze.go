package search

import (
	"hash/fnv"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/spanish"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Doc is what a skill says, as the catalog reads it from its SKILL.md.
type Doc struct {
	Name, DisplayName, Description, Category string
	// Labels are the frontmatter's tags, keywords and other list fields.
	Labels []string
	// Body is SKILL.md after the frontmatter.
	Body string
	// Files are the paths in the skill's folder.
	Files []string
	// Lang is "en", "es", or "" to detect it from the text.
	Lang string
}

// Field is one part of a skill that BM25F weighs on its own.
type Field uint8

// The fields, in the order Weights and the codecs list them.
const (
	FieldName Field = iota
	FieldDisplayName
	FieldDescription
	FieldBody
	FieldHeadings
	FieldFiles
	FieldCategory
	FieldLabels
	numFields
)

var fieldNames = [numFields]string{"name", "display_name", "description", "body", "headings", "files", "category", "labels"}

func (f Field) String() string {
	if f < numFields {
		return fieldNames[f]
	}
	return "field?"
}

// lang is a language the analyzers know.
type lang uint8

const (
	langEN lang = iota
	langES
	numLangs
)

var langNames = [numLangs]string{"en", "es"}

// Limits that bound analysis whatever a skill holds.
const (
	// BodyCap is how much of the body is indexed. The first KiB of a
	// SKILL.md say what it is for (overview, when to use, the main steps);
	// what follows is reference detail that matches every task a little
	// and costs index memory. Measured on the corpus (docs/selection.md,
	// "Ranking").
	BodyCap = 6 << 10
	// fingerprintCap bounds the text the near-duplicate fingerprint and
	// the headings read.
	fingerprintCap = 64 << 10
	// maxFiles and maxLabels bound the list fields.
	maxFiles  = 256
	maxLabels = 64
	// Words shorter or longer than these are noise (initials, base64).
	minWordRunes = 2
	maxWordBytes = 40
	// maxQueryTerms bounds a query's distinct terms.
	maxQueryTerms = 64
	// detectBytes is how much of the description and body language
	// detection reads.
	detectBytes = 4 << 10
)

// Analyzed is a document's terms per field and its fingerprint: the costly
// part of indexing a skill, independent of the weights and of other skills,
// so the catalog can cache it per SKILL.md version (MarshalBinary,
// UnmarshalAnalyzed).
type Analyzed struct {
	lang   lang
	terms  []string     // sorted, distinct
	occ    []occurrence // sorted by term, then field
	length [numFields]uint32
	fp     fingerprint
}

// occurrence is how often a term occurs in one field.
type occurrence struct {
	term  uint32
	field Field
	n     uint16
}

// fingerprint identifies a document's content for near-duplicate checks.
type fingerprint struct {
	sim    uint64 // SimHash over the body's word 3-shingles
	digest uint64 // FNV-64a of the normalized body (the description if none)
	name   uint64 // FNV-64a of the lower-cased name; 0 when unnamed
}

// Lang is the language the document was analyzed as: "en" or "es".
func (a Analyzed) Lang() string { return langNames[a.lang] }

// Terms lists the document's distinct terms, sorted.
func (a Analyzed) Terms() []string { return slices.Clone(a.terms) }

// Analyze reads a document into its terms per field and its fingerprint.
func Analyze(d Doc) Analyzed {
	var l lang
	switch d.Lang {
	case "es":
		l = langES
	case "en":
		l = langEN
	default:
		l = detect(d.Description + "\n" + prefix(d.Body, detectBytes))
	}
	an := newAnalyzer(l)
	body := prefix(d.Body, fingerprintCap)
	text, headings := splitMarkdown(body)
	an.field(FieldName, d.Name, true)
	an.field(FieldDisplayName, d.DisplayName, true)
	an.field(FieldDescription, d.Description, false)
	an.field(FieldBody, prefix(text, BodyCap), false)
	an.field(FieldHeadings, headings, false)
	for i, f := range d.Files {
		if i == maxFiles {
			break
		}
		an.field(FieldFiles, f, true)
	}
	an.field(FieldCategory, d.Category, true)
	for i, s := range d.Labels {
		if i == maxLabels {
			break
		}
		an.field(FieldLabels, s, true)
	}
	a := an.result()
	a.fp = fingerprintOf(d.Name, d.Description, body)
	return a
}

// prefix cuts s to at most n bytes at a rune boundary.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// splitMarkdown separates a Markdown body's ATX headings from the rest;
// fenced code is text, never headings.
func splitMarkdown(body string) (text, headings string) {
	var t, h strings.Builder
	fence := ""
	for line := range strings.Lines(body) {
		trim := strings.TrimLeft(line, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trim, fence) {
				fence = ""
			}
		case strings.HasPrefix(trim, "```"):
			fence = "```"
		case strings.HasPrefix(trim, "~~~"):
			fence = "~~~"
		case len(line)-len(trim) < 4 && isHeading(trim):
			h.WriteString(strings.TrimLeft(trim, "#"))
			continue
		}
		t.WriteString(line)
	}
	return t.String(), h.String()
}

func isHeading(s string) bool {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(s) || s[n] == ' ' || s[n] == '\t' || s[n] == '\n' || s[n] == '\r')
}

// words calls f with each word of s: a run of letters and digits, and in an
// identifier (a name, a file path) also each camelCase part.
func words(s string, ident bool, f func(w string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			emit(s[start:i], ident, f)
			start = -1
		}
	}
	if start >= 0 {
		emit(s[start:], ident, f)
	}
}

func emit(w string, ident bool, f func(string)) {
	if !ident {
		f(w)
		return
	}
	parts := camelParts(w)
	if len(parts) > 1 {
		// "PdfEditor" is found as "pdf", "editor" and "pdfeditor".
		for _, p := range parts {
			f(p)
		}
	}
	f(w)
}

// camelParts splits "XMLHttpRequest" into "XML", "Http", "Request".
func camelParts(w string) []string {
	var parts []string
	start := 0
	rs := []rune(w)
	off := 0
	offs := make([]int, len(rs)+1)
	for i, r := range rs {
		offs[i] = off
		off += utf8.RuneLen(r)
	}
	offs[len(rs)] = off
	for i := 1; i < len(rs); i++ {
		lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
		acronymEnd := unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if lowerToUpper || acronymEnd {
			parts = append(parts, w[offs[start]:offs[i]])
			start = i
		}
	}
	return append(parts, w[offs[start]:])
}

// detect guesses a text's language from its stop words: Spanish when they
// outnumber English ones, English otherwise (the default for short text).
func detect(s string) lang {
	var en, es int
	words(s, false, func(w string) {
		w = strings.ToLower(w)
		if english.IsStopWord(w) {
			en++
		}
		if spanish.IsStopWord(w) {
			es++
		}
	})
	if es > en && es >= 3 {
		return langES
	}
	return langEN
}

// folder removes accents: NFD, drop combining marks, NFC.
var folder = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)

// term turns a word into its indexed form in language l: lower-cased,
// stemmed, accents folded; "" for a stop word or noise.
func term(l lang, w string) string {
	if len(w) > maxWordBytes || utf8.RuneCountInString(w) < minWordRunes {
		return ""
	}
	w = strings.ToLower(w)
	switch l {
	case langES:
		if spanish.IsStopWord(w) {
			return ""
		}
		w = spanish.Stem(w, true)
	default:
		if english.IsStopWord(w) {
			return ""
		}
		w = english.Stem(w, true)
	}
	if !isASCII(w) {
		if f, _, err := transform.String(folder, w); err == nil {
			w = f
		}
	}
	if utf8.RuneCountInString(w) < minWordRunes {
		return ""
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// analyzer collects one document's terms; memo saves stemming a word twice.
type analyzer struct {
	lang   lang
	memo   map[string]string
	counts map[string]*[numFields]uint16
	length [numFields]uint32
}

func newAnalyzer(l lang) *analyzer {
	return &analyzer{lang: l, memo: map[string]string{}, counts: map[string]*[numFields]uint16{}}
}

func (an *analyzer) field(f Field, s string, ident bool) {
	words(s, ident, func(w string) {
		t, ok := an.memo[w]
		if !ok {
			t = term(an.lang, w)
			an.memo[w] = t
		}
		if t == "" {
			return
		}
		c := an.counts[t]
		if c == nil {
			c = new([numFields]uint16)
			an.counts[t] = c
		}
		if c[f] < 0xffff {
			c[f]++
		}
		an.length[f]++
	})
}

func (an *analyzer) result() Analyzed {
	a := Analyzed{lang: an.lang, length: an.length, terms: make([]string, 0, len(an.counts))}
	for t := range an.counts {
		a.terms = append(a.terms, t)
	}
	slices.Sort(a.terms)
	for i, t := range a.terms {
		for f, n := range an.counts[t] {
			if n > 0 {
				a.occ = append(a.occ, occurrence{term: uint32(i), field: Field(f), n: n})
			}
		}
	}
	return a
}

// queryTerm is a query term and the languages whose analysis produced it.
type queryTerm struct {
	text  string
	langs uint8 // bit 1<<lang
}

// analyzeQuery analyzes a task as every language it could be in: a document
// is then matched by the terms of its own language's analysis.
func analyzeQuery(s string) []queryTerm {
	var out []queryTerm
	for l := range numLangs {
		words(s, false, func(w string) {
			t := term(l, w)
			if t == "" {
				return
			}
			for i := range out {
				if out[i].text == t {
					out[i].langs |= 1 << l
					return
				}
			}
			if len(out) < maxQueryTerms {
				out = append(out, queryTerm{text: t, langs: 1 << l})
			}
		})
	}
	return out
}

// fingerprintOf hashes a document's content for NearDuplicate: a SimHash of
// the body's word 3-shingles (near-identical bodies differ in few bits) and
// an exact digest of the normalized body.
func fingerprintOf(name, description, body string) fingerprint {
	var ws []string
	words(body, false, func(w string) { ws = append(ws, strings.ToLower(w)) })
	if len(ws) == 0 {
		words(description, false, func(w string) { ws = append(ws, strings.ToLower(w)) })
	}
	var fp fingerprint
	if len(ws) > 0 {
		h := fnv.New64a()
		for _, w := range ws {
			h.Write([]byte(w))
			h.Write([]byte{' '})
		}
		fp.digest = h.Sum64() | 1 // never 0: 0 means "no content"
		var v [64]int
		for i := 0; i+2 < len(ws) || (i == 0 && len(ws) < 3); i++ {
			h.Reset()
			for _, w := range ws[i:min(i+3, len(ws))] {
				h.Write([]byte(w))
				h.Write([]byte{' '})
			}
			x := h.Sum64()
			for b := range 64 {
				if x&(1<<b) != 0 {
					v[b]++
				} else {
					v[b]--
				}
			}
		}
		for b := range 64 {
			if v[b] > 0 {
				fp.sim |= 1 << b
			}
		}
	}
	if n := strings.ToLower(strings.TrimSpace(name)); n != "" {
		h := fnv.New64a()
		h.Write([]byte(n))
		fp.name = h.Sum64() | 1
	}
	return fp
}

// nearDuplicateHamming is how many of the 64 SimHash bits two bodies may
// differ in and still be one skill's copies (Manku et al.'s 3 of 64).
const nearDuplicateHamming = 3

func (a fingerprint) near(b fingerprint) bool {
	if a.digest != 0 && a.digest == b.digest {
		return true // the same content, under any name
	}
	return a.name != 0 && a.name == b.name && a.digest != 0 && b.digest != 0 &&
		bits.OnesCount64(a.sim^b.sim) <= nearDuplicateHamming
}
