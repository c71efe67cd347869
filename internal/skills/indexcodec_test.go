package skills

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// TestIndexCodec: an index round-trips, and every truncation, a count over
// the limit or a head of an unknown object is refused, never a panic or a
// huge allocation.
func TestIndexCodec(t *testing.T) {
	mod := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	x := &index{gen: 1<<63 + 5, listed: time.Unix(0, 1_700_000_000_123_456_789), objs: []objstore.Object{
		{Key: "alice/skills/a/SKILL.md", Attributes: objstore.Attributes{Size: 42, ETag: "e1", ModTime: mod}},
		{Key: "alice/skills/a/x.bin", Attributes: objstore.Attributes{Size: 0, ETag: ""}},
		{Key: "alice/skills/b/SKILL.md", Attributes: objstore.Attributes{Size: 7, ETag: "e2"}},
	}, heads: map[string][]byte{
		"alice/skills/a/SKILL.md": []byte("---\nname: a\n---\n"),
		"alice/skills/b/SKILL.md": {},
	}}
	b, err := encodeIndex(x, "alice/skills/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeIndex(b, "alice/skills/", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.gen != x.gen || !got.listed.Equal(x.listed) || !reflect.DeepEqual(got.objs, x.objs) || !reflect.DeepEqual(got.heads, x.heads) {
		t.Errorf("round trip: %+v, want %+v", got, x)
	}
	for n := range len(b) {
		if _, err := decodeIndex(b[:n], "alice/skills/", 10); !errors.Is(err, errBadIndex) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := decodeIndex(b, "alice/skills/", 2); !errors.Is(err, errBadIndex) {
		t.Errorf("over max objects: err = %v", err)
	}
	if _, err := decodeIndex(append(b, 0), "alice/skills/", 10); !errors.Is(err, errBadIndex) {
		t.Errorf("trailing byte: err = %v", err)
	}
	if _, err := encodeIndex(x, "bob/skills/"); err == nil {
		t.Error("encoding keys outside the prefix succeeded")
	}
	// A head naming an object past the count.
	bad := &index{objs: x.objs[:1], heads: map[string][]byte{x.objs[0].Key: nil}}
	b, _ = encodeIndex(bad, "alice/skills/")
	b[len(b)-2] = 9 // the head's object number
	if _, err := decodeIndex(b, "alice/skills/", 10); !errors.Is(err, errBadIndex) {
		t.Errorf("head of object 9 of 1: err = %v", err)
	}
}

func TestStampCodec(t *testing.T) {
	s := stamp{gen: 42, listed: time.Unix(0, 1_700_000_000_123_456_789)}
	got, ok := decodeStamp(encodeStamp(s))
	if !ok || got.gen != s.gen || !got.listed.Equal(s.listed) {
		t.Errorf("round trip: %+v, %t", got, ok)
	}
	if _, ok := decodeStamp([]byte("short")); ok {
		t.Error("a short stamp decoded")
	}
}
