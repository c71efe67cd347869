package search

import (
	"slices"
	"strings"
	"sync"
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
	// BodyCap is how much of the body is indexed. Measured on the corpus
	// (test/selection, tune requests): MRR 0.40 at 1 KiB, 0.44 at 4, 0.45
	// at 6, 0.46 at 12, 0.48 at 32, 0.49 at 64, for 413 to 787 index bytes
	// per skill: every KiB helped, as the long, general skills describe
	// their tasks far down. So the cap only bounds the work, at the size
	// the corpus keeps SKILL.md files to (its p99 is 30 KiB).
	BodyCap = 64 << 10
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

// bodyCap is BodyCap; the tuning run measures others.
var bodyCap = BodyCap

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
	// minhash estimates the Jaccard similarity of two bodies' sets of
	// word 3-shingles (one-permutation MinHash, densified).
	minhash [minhashBins]uint16
	digest  uint64 // FNV-64a of the normalized body (the description if none); 0 when empty
	name    uint64 // FNV-64a of the lower-cased name; 0 when unnamed
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
	an.field(FieldBody, prefix(text, bodyCap), false)
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
	upper := false
	for i, r := range w {
		if i > 0 && unicode.IsUpper(r) {
			upper = true
			break
		}
	}
	if !upper {
		return nil
	}
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

// terms remembers the terms of recent words per language, across
// documents: words follow Zipf's law, so most are stemmed once per
// process rather than once per skill. Bounded: emptied when full.
var terms [numLangs]struct {
	sync.RWMutex
	m map[string]string
}

const maxCachedTerms = 1 << 15

// term turns a word into its indexed form in language l: lower-cased,
// stemmed, accents folded; "" for a stop word or noise.
func term(l lang, w string) string {
	c := &terms[l]
	c.RLock()
	t, ok := c.m[w]
	c.RUnlock()
	if ok {
		return t
	}
	t = analyzeWord(l, w)
	c.Lock()
	if c.m == nil || len(c.m) >= maxCachedTerms {
		c.m = make(map[string]string, 1024)
	}
	c.m[strings.Clone(w)] = t
	c.Unlock()
	return t
}

func analyzeWord(l lang, w string) string {
	if len(w) > maxWordBytes || utf8.RuneCountInString(w) < minWordRunes {
		return ""
	}
	w = strings.ToLower(w)
	switch l {
	case langES:
		if spanish.IsStopWord(w) {
			return ""
		}
		w = spanish.Stem(restoreAccent(w), true)
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

// unaccentedSuffixes are the Spanish suffixes Snowball removes only with
// their accent, as people often type them without one: "facturacion" must
// stem as "facturación" does.
var unaccentedSuffixes = [][2]string{{"cion", "ción"}, {"sion", "sión"}, {"logia", "logía"}, {"logias", "logías"}}

func restoreAccent(w string) string {
	for _, s := range unaccentedSuffixes {
		if strings.HasSuffix(w, s[0]) && len(w) > len(s[0])+2 {
			return w[:len(w)-len(s[0])] + s[1]
		}
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

// fingerprintOf hashes a document's content for NearDuplicate: a MinHash
// of the body's word 3-shingles and an exact digest of the normalized body
// (its lower-cased words); the description stands for an empty body.
func fingerprintOf(name, description, body string) fingerprint {
	var ws []uint64 // each word's hash
	var digest uint64 = fnvOffset
	add := func(w string) {
		w = strings.ToLower(w)
		ws = append(ws, fnvString(fnvOffset, w))
		digest = fnvString(digest, w)
		digest = fnvByte(digest, ' ')
	}
	words(body, false, add)
	if len(ws) == 0 {
		words(description, false, add)
	}
	var fp fingerprint
	for i := range fp.minhash {
		fp.minhash[i] = 0xffff
	}
	if len(ws) > 0 {
		fp.digest = digest | 1 // never 0: 0 means "no content"
		var bins [minhashBins]uint64
		var filled uint64 // bit i: bin i has a shingle
		for i := range bins {
			bins[i] = ^uint64(0)
		}
		for i := 0; i+2 < len(ws) || (i == 0 && len(ws) < 3); i++ {
			x := uint64(fnvOffset)
			for _, h := range ws[i:min(i+3, len(ws))] {
				x = mix64(x ^ h)
			}
			bin := x >> (64 - minhashBinBits)
			if v := x << minhashBinBits; v < bins[bin] {
				bins[bin] = v
				filled |= 1 << bin
			}
		}
		// An empty bin borrows the value of a filled one chosen by a
		// fixed probe sequence (Shrivastava's optimal densification), so
		// short bodies compare as well as long ones.
		for i := range bins {
			src := uint64(i)
			for a := uint64(1); filled&(1<<src) == 0; a++ {
				src = mix64(uint64(i)<<32|a) >> (64 - minhashBinBits)
			}
			fp.minhash[i] = uint16(bins[src] >> 48)
		}
	}
	if n := strings.ToLower(strings.TrimSpace(name)); n != "" {
		fp.name = fnvString(fnvOffset, n) | 1
	}
	return fp
}

// mix64 is SplitMix64's finalizer: every input bit moves every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// FNV-1a, 64 bits: stable across processes and versions, as fingerprints
// are persisted.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}

const (
	minhashBinBits = 6
	minhashBins    = 1 << minhashBinBits
	// nearDuplicateBins is how many of the 64 MinHash bins two bodies must
	// share to be one skill's copies: 58 (an estimated shingle Jaccard of
	// 0.9, the bench harness's rule), measured on 1,649 public SKILL.md
	// files: all 525 same-name pairs at Jaccard >= 0.9 found, 4 of 3,562
	// below it taken (SimHash over the same shingles missed 53 at its
	// usual 3 bits of 64).
	nearDuplicateBins = 58
)

func (a *fingerprint) near(b *fingerprint) bool {
	if a.digest != 0 && a.digest == b.digest {
		return true // the same content, under any name
	}
	if a.name == 0 || a.name != b.name || a.digest == 0 || b.digest == 0 {
		return false
	}
	n := 0
	for i := range a.minhash {
		if a.minhash[i] == b.minhash[i] {
			n++
		}
	}
	return n >= nearDuplicateBins
}
