package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// ErrCorrupt is returned for bytes that are not a well-formed encoding of
// this version: cached bytes are untrusted, and a caller rebuilds.
var ErrCorrupt = errors.New("search: corrupt or foreign encoding")

// Encodings start with a magic and a version: a change to the analysis
// (tokens, stemming, caps, fingerprints) or to a layout bumps the version,
// so analyses and indexes cached or persisted by an older binary are made
// again rather than misread or mixed with new ones. They end with a CRC-32C
// of everything before it.
const (
	indexMagic      = "SKIX"
	analyzedMagic   = "SKAN"
	formatVersion   = 3
	indexVersion    = formatVersion
	analyzedVersion = formatVersion
	// maxEncoded bounds what the decoders accept.
	maxEncoded = 1 << 30
	maxDocs    = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func seal(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// open checks magic, version and checksum and returns the body.
func open(b []byte, magic string, version byte) ([]byte, error) {
	if len(b) > maxEncoded || len(b) < len(magic)+1+4 || string(b[:len(magic)]) != magic {
		return nil, ErrCorrupt
	}
	if b[len(magic)] != version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, b[len(magic)], version)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum", ErrCorrupt)
	}
	return body[len(magic)+1:], nil
}

// reader decodes a body, remembering the first failure.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint(limit uint64) uint64 {
	if r.bad {
		return 0
	}
	v, k := canonicalUvarint(r.b)
	if k <= 0 || v > limit {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) bytes(n uint64) []byte {
	if r.bad || n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) uint64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (r *reader) float() float64 {
	f := math.Float64frombits(r.uint64())
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e6 {
		r.bad = true
	}
	return f
}

func (r *reader) lang() lang {
	l := lang(r.byte())
	if l >= numLangs {
		r.bad = true
	}
	return l
}

func (r *reader) fingerprint() fingerprint {
	var fp fingerprint
	if b := r.bytes(2 * minhashBins); b != nil {
		for i := range fp.minhash {
			fp.minhash[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
	}
	fp.digest, fp.name = r.uint64(), r.uint64()
	return fp
}

func appendFingerprint(b []byte, fp fingerprint) []byte {
	for _, v := range fp.minhash {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, fp.digest)
	return binary.LittleEndian.AppendUint64(b, fp.name)
}

// MarshalBinary encodes the analysis for a cache.
func (a Analyzed) MarshalBinary() ([]byte, error) {
	b := append([]byte(analyzedMagic), analyzedVersion, byte(a.lang))
	for _, n := range a.length {
		b = binary.AppendUvarint(b, uint64(n))
	}
	b = appendFingerprint(b, a.fp)
	b = binary.AppendUvarint(b, uint64(len(a.terms)))
	for _, t := range a.terms {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
	}
	b = binary.AppendUvarint(b, uint64(len(a.occ)))
	for _, o := range a.occ {
		b = binary.AppendUvarint(b, uint64(o.term))
		b = append(b, byte(o.field))
		b = binary.AppendUvarint(b, uint64(o.n))
	}
	return seal(b), nil
}

// UnmarshalAnalyzed decodes MarshalBinary's bytes, checking them whole.
func UnmarshalAnalyzed(data []byte) (Analyzed, error) {
	body, err := open(data, analyzedMagic, analyzedVersion)
	if err != nil {
		return Analyzed{}, err
	}
	r := &reader{b: body}
	var a Analyzed
	a.lang = r.lang()
	for f := range a.length {
		a.length[f] = uint32(r.uvarint(math.MaxUint32))
	}
	a.fp = r.fingerprint()
	// Every term and occurrence takes at least 2 bytes, so counts above
	// the input's length are lies, caught before allocating.
	nt := r.uvarint(uint64(len(body)) / 2)
	a.terms = make([]string, 0, nt)
	for range nt {
		t := string(r.bytes(r.uvarint(maxWordBytes * 4)))
		if r.bad || t == "" || (len(a.terms) > 0 && t <= a.terms[len(a.terms)-1]) {
			return Analyzed{}, fmt.Errorf("%w: terms", ErrCorrupt)
		}
		a.terms = append(a.terms, t)
	}
	no := r.uvarint(uint64(len(body)) / 3)
	a.occ = make([]occurrence, 0, no)
	for range no {
		o := occurrence{term: uint32(r.uvarint(nt)), field: Field(r.byte()), n: uint16(r.uvarint(math.MaxUint16))}
		if r.bad || uint64(o.term) >= nt || o.field >= numFields || o.n == 0 {
			return Analyzed{}, fmt.Errorf("%w: occurrences", ErrCorrupt)
		}
		if k := len(a.occ); k > 0 {
			p := a.occ[k-1]
			if o.term < p.term || (o.term == p.term && o.field <= p.field) {
				return Analyzed{}, fmt.Errorf("%w: occurrence order", ErrCorrupt)
			}
		}
		a.occ = append(a.occ, o)
	}
	if r.bad || len(r.b) != 0 {
		return Analyzed{}, ErrCorrupt
	}
	return a, nil
}

// MarshalBinary encodes the index so a replica can load it rather than
// rebuild it.
func (x *Index) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, x.Bytes()+64)
	b = append(b, indexMagic...)
	b = append(b, indexVersion)
	for _, fw := range x.weights.Fields {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(fw.Weight))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(fw.B))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.weights.K1))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.weights.IDFPower))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x.weights.CopyBoost))
	b = binary.AppendUvarint(b, uint64(x.n))
	for i := range x.n {
		b = append(b, byte(x.lang[i]))
		b = appendFingerprint(b, x.fp[i])
	}
	b = binary.AppendUvarint(b, uint64(len(x.termEnd)))
	prev := uint32(0)
	for i, end := range x.termEnd {
		b = binary.AppendUvarint(b, uint64(end-prev))
		b = binary.AppendUvarint(b, uint64(x.postEnd[i]-postStart(x, i)))
		prev = end
	}
	b = append(b, x.terms...)
	b = append(b, x.post...)
	return seal(b), nil
}

func postStart(x *Index, i int) uint32 {
	if i == 0 {
		return 0
	}
	return x.postEnd[i-1]
}

// UnmarshalIndex decodes MarshalBinary's bytes, checking every posting
// list, so a search never meets a malformed one.
func UnmarshalIndex(data []byte) (*Index, error) {
	body, err := open(data, indexMagic, indexVersion)
	if err != nil {
		return nil, err
	}
	r := &reader{b: body}
	x := &Index{}
	for f := range x.weights.Fields {
		x.weights.Fields[f] = FieldWeight{Weight: r.float(), B: r.float()}
		if x.weights.Fields[f].B > 1 {
			r.bad = true
		}
	}
	x.weights.K1 = r.float()
	x.weights.IDFPower = r.float()
	x.weights.CopyBoost = r.float()
	x.n = int(r.uvarint(min(maxDocs, uint64(len(body))/(1+2*minhashBins+16))))
	x.lang = make([]lang, x.n)
	x.fp = make([]fingerprint, x.n)
	for i := range x.n {
		x.lang[i] = r.lang()
		x.fp[i] = r.fingerprint()
	}
	nt := r.uvarint(uint64(len(body)) / 4)
	x.termEnd = make([]uint32, nt)
	x.postEnd = make([]uint32, nt)
	var termBytes, postBytes uint64
	for i := range nt {
		termBytes += r.uvarint(maxWordBytes * 4)
		postBytes += r.uvarint(uint64(len(body)))
		if r.bad || termBytes > uint64(len(body)) || postBytes > uint64(len(body)) {
			return nil, fmt.Errorf("%w: sizes", ErrCorrupt)
		}
		x.termEnd[i], x.postEnd[i] = uint32(termBytes), uint32(postBytes)
	}
	x.terms = string(r.bytes(termBytes))
	x.post = r.bytes(postBytes)
	if r.bad || len(r.b) != 0 {
		return nil, ErrCorrupt
	}
	x.post = append([]byte(nil), x.post...) // not aliasing the caller's buffer
	for i := range int(nt) {
		if t := x.term(i); t == "" || (i > 0 && t <= x.term(i-1)) {
			return nil, fmt.Errorf("%w: term order", ErrCorrupt)
		}
		if !validPostings(x.postings(i), x.n) {
			return nil, fmt.Errorf("%w: postings", ErrCorrupt)
		}
	}
	return x, nil
}

// validPostings checks a posting list: its count, strictly increasing
// document numbers below n, non-zero weights, nothing left over.
func validPostings(p []byte, n int) bool {
	df, k := canonicalUvarint(p)
	if k <= 0 || df == 0 || df > uint64(n) {
		return false
	}
	p = p[k:]
	doc := uint64(0)
	for i := range df {
		d, k := canonicalUvarint(p)
		if k <= 0 || k >= len(p) || (i > 0 && d == 0) || d >= uint64(n) {
			return false
		}
		doc += d
		if doc >= uint64(n) || p[k] == 0 {
			return false
		}
		p = p[k+1:]
	}
	return len(p) == 0
}

// canonicalUvarint reads a uvarint in its shortest form only, so one value
// has one encoding and accepted bytes re-encode to themselves.
func canonicalUvarint(b []byte) (uint64, int) {
	v, k := binary.Uvarint(b)
	if k > 0 && k != uvarintLen(v) {
		return 0, -1
	}
	return v, k
}
