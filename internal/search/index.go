package search

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// FieldWeight is one field's part in BM25F: how much an occurrence counts
// (Weight) and how much the field's length discounts it (B, 0..1, against
// the field's reference length).
type FieldWeight struct {
	Weight, B float64
}

// Weights parameterize BM25F. Use DefaultWeights unless measuring.
type Weights struct {
	Fields [numFields]FieldWeight // indexed by Field
	// K1 is how fast repeated occurrences saturate.
	K1 float64
	// IDFPower raises each query term's inverse document frequency to a
	// power: below 1, a document matching more of a task's words beats
	// one matching a single rare word (a topic the task mentions in
	// passing). Search takes it from the first layer's index.
	IDFPower float64
	// CopyBoost raises a collapsed group's place by CopyBoost·ln(copies):
	// a skill copied into several of the caller's libraries (or forked
	// across them) is one people use. Relevance itself is not raised.
	CopyBoost float64
}

// refLength is each field's mean length in terms on the corpus
// (test/selection), over the skills that have the field: BM25F's length normalization is against these fixed
// figures rather than each index's mean, so a document's weighted term
// frequencies do not depend on which other skills share its layer, and an
// index can carry them over (Reuse) and be searched beside others.
var refLength = [numFields]float64{
	FieldName:        3.2,
	FieldDisplayName: 6.4,
	FieldDescription: 23.3,
	FieldBody:        452,
	FieldHeadings:    31.8,
	FieldFiles:       16.9,
	FieldCategory:    2, // the corpus has none: a path segment or two
	FieldLabels:      13.9,
}

// quantize maps a term's saturated BM25F frequency, tf/(tf+K1) in 0..1, to
// the byte a posting keeps: 1/255 steps are finer than the differences
// that reorder results.
func quantize(s float64) uint8 {
	q := math.Round(s * 255)
	return uint8(min(max(q, 1), 255))
}

// saturation is a document's weight for one term from its occurrences.
func (w *Weights) saturation(occ []occurrence, length *[numFields]uint32) float64 {
	tf := 0.0
	for _, o := range occ {
		fw := w.Fields[o.field]
		norm := 1 - fw.B + fw.B*float64(length[o.field])/refLength[o.field]
		tf += fw.Weight * float64(o.n) / norm
	}
	if tf <= 0 {
		return 0
	}
	return tf / (tf + w.K1)
}

// Index is an immutable inverted index of one layer's documents, safe for
// concurrent readers. Postings are delta-varint document numbers, each
// followed by a byte: the document's quantized BM25F weight for the term.
type Index struct {
	weights Weights
	n       int
	// terms[termEnd[i-1]:termEnd[i]] is term i; terms are sorted.
	terms   string
	termEnd []uint32
	// post[postEnd[i-1]:postEnd[i]] is term i's posting list: its
	// document frequency, then (delta, weight) per document.
	post    []byte
	postEnd []uint32
	lang    []lang
	fp      []fingerprint
}

// Len is the number of documents.
func (x *Index) Len() int { return x.n }

// Bytes estimates the index's heap size.
func (x *Index) Bytes() int64 {
	return int64(unsafe.Sizeof(*x)) + int64(len(x.terms)) + 4*int64(len(x.termEnd)) + int64(len(x.post)) +
		4*int64(len(x.postEnd)) + int64(len(x.lang)) + int64(unsafe.Sizeof(fingerprint{}))*int64(len(x.fp))
}

func (x *Index) numTerms() int { return len(x.termEnd) }

func (x *Index) term(i int) string {
	start := uint32(0)
	if i > 0 {
		start = x.termEnd[i-1]
	}
	return x.terms[start:x.termEnd[i]]
}

func (x *Index) postings(i int) []byte {
	start := uint32(0)
	if i > 0 {
		start = x.postEnd[i-1]
	}
	return x.post[start:x.postEnd[i]]
}

// lookup returns term t's posting list and document frequency.
func (x *Index) lookup(t string) ([]byte, int) {
	i := sort.Search(x.numTerms(), func(i int) bool { return x.term(i) >= t })
	if i == x.numTerms() || x.term(i) != t {
		return nil, 0
	}
	p := x.postings(i)
	df, k := binary.Uvarint(p)
	return p[k:], int(df)
}

// Builder collects documents for one Index. Not safe for concurrent use.
type Builder struct {
	w       Weights
	lang    []lang
	fp      []fingerprint
	post    map[string][]posting
	forward map[*Index][][]posting // prev's postings by document, for Reuse
}

// posting is one document's weight for a term: in Builder.post, doc is the
// document; in Builder.forward, it is the term's number in the index.
type posting struct {
	doc uint32
	q   uint8
}

// NewBuilder starts an index weighted by w.
func NewBuilder(w Weights) *Builder {
	return &Builder{w: w, post: map[string][]posting{}}
}

// Add appends an analyzed document; documents are numbered in the order
// they are added or reused.
func (b *Builder) Add(a Analyzed) {
	doc := uint32(len(b.lang))
	b.lang = append(b.lang, a.lang)
	b.fp = append(b.fp, a.fp)
	occ := a.occ
	for i, t := range a.terms {
		j := 0
		for j < len(occ) && occ[j].term == uint32(i) {
			j++
		}
		if s := b.w.saturation(occ[:j], &a.length); s > 0 {
			b.post[t] = append(b.post[t], posting{doc: doc, q: quantize(s)})
		}
		occ = occ[j:]
	}
}

// Reuse appends document doc of prev without analyzing it again, as it
// was indexed there, and reports whether it could: not when doc is out of
// range or prev was weighted otherwise (an index persisted before the
// weights changed), and then the caller adds the document's analysis.
func (b *Builder) Reuse(prev *Index, doc int) bool {
	if prev == nil || doc < 0 || doc >= prev.n || prev.weights != b.w {
		return false
	}
	if b.forward == nil {
		b.forward = map[*Index][][]posting{}
	}
	fwd, ok := b.forward[prev]
	if !ok {
		fwd = prev.invert()
		b.forward[prev] = fwd
	}
	id := uint32(len(b.lang))
	b.lang = append(b.lang, prev.lang[doc])
	b.fp = append(b.fp, prev.fp[doc])
	for _, p := range fwd[doc] {
		t := prev.term(int(p.doc))
		b.post[t] = append(b.post[t], posting{doc: id, q: p.q})
	}
	return true
}

// invert lists each document's terms (as term numbers) and weights.
func (x *Index) invert() [][]posting {
	fwd := make([][]posting, x.n)
	for t := range x.numTerms() {
		p := x.postings(t)
		df, k := binary.Uvarint(p)
		p = p[k:]
		doc := uint64(0)
		for i := uint64(0); i < df; i++ {
			d, k := binary.Uvarint(p)
			doc += d
			fwd[doc] = append(fwd[doc], posting{doc: uint32(t), q: p[k]})
			p = p[k+1:]
		}
	}
	return fwd
}

// Build makes the index. The Builder may not be used afterwards.
func (b *Builder) Build() *Index {
	x := &Index{weights: b.w, n: len(b.lang), lang: slices.Clip(b.lang), fp: slices.Clip(b.fp)}
	terms := make([]string, 0, len(b.post))
	size, termBytes := 0, 0
	for t, ps := range b.post {
		terms = append(terms, t)
		termBytes += len(t)
		size += uvarintLen(uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps {
			size += uvarintLen(uint64(p.doc-prev)) + 1
			prev = p.doc
		}
	}
	slices.Sort(terms)
	var sb strings.Builder
	sb.Grow(termBytes)
	x.termEnd = make([]uint32, len(terms))
	x.postEnd = make([]uint32, len(terms))
	post := make([]byte, 0, size)
	for i, t := range terms {
		sb.WriteString(t)
		x.termEnd[i] = uint32(sb.Len())
		ps := b.post[t]
		post = binary.AppendUvarint(post, uint64(len(ps)))
		prev := uint32(0)
		for _, p := range ps {
			post = binary.AppendUvarint(post, uint64(p.doc-prev))
			post = append(post, p.q)
			prev = p.doc
		}
		x.postEnd[i] = uint32(len(post))
	}
	x.terms = sb.String()
	x.post = post
	b.post, b.forward = nil, nil
	return x
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
