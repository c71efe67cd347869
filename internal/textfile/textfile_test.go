package textfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		head string
		size int64
		want bool
	}{
		{"text", "hello\n", 6, false},
		{"NUL", "a\x00b", 3, true},
		{"invalid UTF-8", "a\xffb", 3, true},
		{"head cut mid-rune", "caf\xc3", 100, false},
		{"whole file ending mid-rune", "caf\xc3", 4, true},
		{"empty", "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsBinary([]byte(tc.head), tc.size); got != tc.want {
				t.Errorf("IsBinary(%q, %d) = %v, want %v", tc.head, tc.size, got, tc.want)
			}
		})
	}
}

// getter serves one body with the given attributes, as a bucket or a VFS
// tree would, and records whether the body was read and closed.
type getter struct {
	body   string
	size   int64
	err    error
	read   bool
	closed bool
}

func (g *getter) Get(_ context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	if g.err != nil {
		return nil, objstore.Attributes{}, fmt.Errorf("get %s: %w", key, g.err)
	}
	return &body{Reader: strings.NewReader(g.body), g: g}, objstore.Attributes{Size: g.size, ETag: "e1"}, nil
}

type body struct {
	*strings.Reader
	g *getter
}

func (b *body) Read(p []byte) (int, error) { b.g.read = true; return b.Reader.Read(p) }
func (b *body) Close() error               { b.g.closed = true; return nil }

func TestReaderRead(t *testing.T) {
	const name = "/workspace/f.txt"
	for _, tc := range []struct {
		name     string
		g        getter
		want     string
		err      error
		readBody bool // whether the body may be read at all
	}{
		{"text", getter{body: "hello\n", size: 6}, "hello\n", nil, true},
		{"empty", getter{body: "", size: 0}, "", nil, true},
		{"exactly the limit", getter{body: "0123456789", size: 10}, "0123456789", nil, true},
		{"over the limit by its size", getter{body: strings.Repeat("x", 11), size: 11}, "", errkind.ResourceExhausted, false},
		{"over the limit with a stale size", getter{body: strings.Repeat("x", 50), size: 5}, "", errkind.ResourceExhausted, true},
		{"binary", getter{body: "a\x00b", size: 3}, "", ErrBinary, true},
		{"not UTF-8", getter{body: "caf\xc3", size: 4}, "", ErrBinary, true},
		{"storage error", getter{err: objstore.ErrNotFound}, "", objstore.ErrNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.g
			data, a, err := Reader{MaxBytes: 10, Hint: "use Download"}.Read(t.Context(), &g, "alice/f.txt", name)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Read err = %v, want %v", err, tc.err)
				}
				if tc.g.err == nil && (!strings.Contains(err.Error(), name) || !strings.HasSuffix(err.Error(), "; use Download") || strings.Contains(err.Error(), "alice/")) {
					t.Errorf("Read err = %q, want it to name %s, not the key, and end with the hint", err, name)
				}
			} else if err != nil || string(data) != tc.want || a.ETag != "e1" {
				t.Errorf("Read = %q, %+v, %v; want %q with the getter's attributes", data, a, err, tc.want)
			}
			if g.read && !tc.readBody {
				t.Error("the body was read, want a refusal before reading it")
			}
			if tc.g.err == nil && !g.closed {
				t.Error("the body was not closed")
			}
		})
	}
}
