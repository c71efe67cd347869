package search

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzUnmarshalIndex: bytes from a shared cache are untrusted (reseal
// fixes the checksum so the fuzzer gets past it). Decoding
// never panics, rejects with ErrCorrupt, and an accepted index searches,
// re-encodes to the same bytes and answers NearDuplicate within bounds.
func FuzzUnmarshalIndex(f *testing.F) {
	x := build(DefaultWeights,
		Doc{Name: "pdf", Description: "Fill PDF forms", Body: "# Steps\nread the fields", Files: []string{"fill.py"}},
		Doc{Name: "contratos", Description: "Redacta contratos de arrendamiento para los abogados"},
	)
	b, _ := x.MarshalBinary()
	f.Add(b, false)
	e, _ := NewBuilder(DefaultWeights).Build().MarshalBinary()
	f.Add(e, true)
	f.Fuzz(func(t *testing.T, data []byte, reseal bool) {
		data = resealed(data, reseal)
		y, err := UnmarshalIndex(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, _ := y.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not re-encode to themselves")
		}
		for _, q := range []string{"pdf forms", "contrato arrendamiento", "zzz"} {
			for _, h := range Search([]Layer{{X: y}, {X: x, Rank: 1}}, Query{Text: q, Collapse: true}) {
				if h.Relevance < 0 || h.Relevance > 1 || h.Doc >= []int{y.Len(), x.Len()}[h.Layer] {
					t.Fatalf("bad hit %+v", h)
				}
			}
		}
		for i := range min(y.Len(), 4) {
			NearDuplicate(y, x, i, 0)
		}
		b := NewBuilder(DefaultWeights)
		for i := range min(y.Len(), 4) {
			b.Reuse(y, i)
		}
		b.Build()
	})
}

// FuzzUnmarshalAnalyzed: an accepted analysis re-encodes to itself and
// indexes without panicking.
func FuzzUnmarshalAnalyzed(f *testing.F) {
	for _, d := range []Doc{
		{Name: "pdf", Description: "Fill PDF forms", Body: "# Steps\nread the fields", Labels: []string{"pdf"}},
		{Description: "Redacta contratos de arrendamiento para los abogados"},
		{},
	} {
		b, _ := Analyze(d).MarshalBinary()
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, reseal bool) {
		data = resealed(data, reseal)
		a, err := UnmarshalAnalyzed(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, _ := a.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not re-encode to themselves")
		}
		b := NewBuilder(DefaultWeights)
		b.Add(a)
		y := b.Build()
		if _, err := UnmarshalIndex(must(y.MarshalBinary())); err != nil {
			t.Fatalf("index of an accepted analysis does not decode: %v", err)
		}
	})
}

// resealed recomputes the checksum when asked, so the fuzzer reaches the
// structural checks behind it.
func resealed(data []byte, reseal bool) []byte {
	if !reseal || len(data) < 4 {
		return data
	}
	return seal(bytes.Clone(data[:len(data)-4]))
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
