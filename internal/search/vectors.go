package search

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
)

// Vec is one document's embedding, unit-normalized and quantized to int8:
// a little-endian float32 scale, then one signed byte per dimension, so a
// 384-dimension embedding holds in 388 bytes (a float32 one in 1,536) and
// loses under 1% of its cosine. It is also the form the catalog caches.
type Vec []byte

// Quantize returns v's Vec; nil for an empty or all-zero v.
func Quantize(v []float32) Vec {
	var norm, peak float64
	for _, x := range v {
		norm += float64(x) * float64(x)
		peak = max(peak, math.Abs(float64(x)))
	}
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return nil
	}
	norm = math.Sqrt(norm)
	scale := peak / norm / 127
	out := make(Vec, 4+len(v))
	binary.LittleEndian.PutUint32(out, math.Float32bits(float32(scale)))
	for i, x := range v {
		out[4+i] = byte(int8(math.Round(float64(x) / norm / scale)))
	}
	return out
}

// Dim is how many dimensions v has; 0 for an invalid Vec.
func (v Vec) Dim() int { return max(len(v)-4, 0) }

func (v Vec) scale() float32 { return math.Float32frombits(binary.LittleEndian.Uint32(v)) }

// Vectors are a layer's embeddings, numbered as its Index's documents: the
// semantic half of a hybrid search (Layer.Vectors).
type Vectors struct {
	dim   int
	q     []int8    // dim per document
	scale []float32 // 0: the document has no embedding
}

// ErrVectors says the rows of NewVectors do not fit together.
var ErrVectors = errors.New("search: vectors of differing dimensions")

// NewVectors holds rows (nil for a document without an embedding, which
// then scores 0 by similarity) as one layer's Vectors.
func NewVectors(rows []Vec) (*Vectors, error) {
	x := &Vectors{scale: make([]float32, len(rows))}
	for _, r := range rows {
		if r.Dim() > 0 {
			x.dim = r.Dim()
			break
		}
	}
	x.q = make([]int8, x.dim*len(rows))
	for d, r := range rows {
		if r == nil {
			continue
		}
		if r.Dim() != x.dim {
			return nil, ErrVectors
		}
		x.scale[d] = r.scale()
		for i, b := range r[4:] {
			x.q[d*x.dim+i] = int8(b)
		}
	}
	return x, nil
}

// Len is how many documents x has; Dim their dimensions.
func (x *Vectors) Len() int { return len(x.scale) }
func (x *Vectors) Dim() int { return x.dim }

// Row returns document d's Vec, nil when it has none: what a later
// generation's build reuses.
func (x *Vectors) Row(d int) Vec {
	if d < 0 || d >= len(x.scale) || x.scale[d] == 0 {
		return nil
	}
	out := make(Vec, 4+x.dim)
	binary.LittleEndian.PutUint32(out, math.Float32bits(x.scale[d]))
	for i, v := range x.q[d*x.dim : (d+1)*x.dim] {
		out[4+i] = byte(v)
	}
	return out
}

// Bytes is what x holds in memory.
func (x *Vectors) Bytes() int64 { return int64(cap(x.q)) + 4*int64(cap(x.scale)) + 48 }

// similarity sets sim[d] to document d's cosine with the unit vector q.
// q is quantized to int8 too, so the dot products are integer ones, four
// at a time: a 10,000-skill layer in about a third of the time of float
// ones, for under 1% of a cosine.
func (x *Vectors) similarity(q []float32, sim []float32) {
	var peak float32
	for _, v := range q {
		peak = max(peak, v, -v)
	}
	if peak == 0 || x.dim == 0 {
		clear(sim[:len(x.scale)])
		return
	}
	qs := peak / 127
	qq := make([]int32, x.dim)
	for i, v := range q {
		qq[i] = int32(math.Round(float64(v / qs)))
	}
	for d := range x.scale {
		s := x.scale[d]
		if s == 0 {
			sim[d] = 0
			continue
		}
		row := x.q[d*x.dim : (d+1)*x.dim]
		row = row[:len(qq)]
		var a0, a1, a2, a3 int32
		i := 0
		for ; i+4 <= len(qq); i += 4 {
			a0 += int32(row[i]) * qq[i]
			a1 += int32(row[i+1]) * qq[i+1]
			a2 += int32(row[i+2]) * qq[i+2]
			a3 += int32(row[i+3]) * qq[i+3]
		}
		for ; i < len(qq); i++ {
			a0 += int32(row[i]) * qq[i]
		}
		sim[d] = float32(a0+a1+a2+a3) * s * qs
	}
}

// unit returns v scaled to length 1; nil for a zero or non-finite v.
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// EmbedTextBytes bounds the text of a skill that is embedded: its name and
// description and the start of its body, what a small embedding model
// reads (all-MiniLM-L6-v2 reads 256 tokens, about this many bytes of
// English).
const EmbedTextBytes = 1024

// EmbedText is the text of d an embeddings endpoint is given: its display
// name or name, its description, then its body's start, at most
// EmbedTextBytes and cut at a character.
func EmbedText(d Doc) string {
	var b strings.Builder
	name := d.DisplayName
	if name == "" {
		name = d.Name
	}
	b.WriteString(name)
	if d.Description != "" {
		b.WriteString(": ")
		b.WriteString(d.Description)
	}
	if body := strings.TrimSpace(d.Body); body != "" {
		b.WriteString("\n")
		b.WriteString(body)
	}
	s := b.String()
	// A character cut in two is dropped with any other invalid bytes.
	return strings.ToValidUTF8(s[:min(len(s), EmbedTextBytes)], "")
}
