package server

import (
	"bytes"
	"testing"
)

func TestChunkWriter(t *testing.T) {
	var chunks [][]byte
	w := &chunkWriter{size: 4, send: func(b []byte) error {
		chunks = append(chunks, bytes.Clone(b)) // as grpc's Send marshals before returning
		return nil
	}}
	for _, s := range []string{"ab", "cdefghij", "", "k"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range chunks {
		got = append(got, string(c))
	}
	if want := []string{"abcd", "efgh", "ijk"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("chunks = %q, want %q", got, want)
	}
}
