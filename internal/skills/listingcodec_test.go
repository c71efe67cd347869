package skills

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// TestListingCodec: a listing round-trips, and every truncation or a count
// over the limit is refused, never a panic or a huge allocation.
func TestListingCodec(t *testing.T) {
	mod := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	l := &listing{gen: 1<<63 + 5, made: time.Unix(0, 1_700_000_000_123_456_789), objs: []objstore.Object{
		{Key: "alice/skills/a/SKILL.md", Attributes: objstore.Attributes{Size: 42, ETag: "e1", ModTime: mod}},
		{Key: "alice/skills/a/x.bin", Attributes: objstore.Attributes{Size: 0, ETag: ""}},
	}}
	b, err := encodeListing(l, "alice/skills/")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeListing(b, "alice/skills/", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.gen != l.gen || !got.made.Equal(l.made) || !reflect.DeepEqual(got.objs, l.objs) {
		t.Errorf("round trip: %+v, want %+v", got, l)
	}
	for n := range len(b) {
		if _, err := decodeListing(b[:n], "alice/skills/", 10); !errors.Is(err, errBadListing) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := decodeListing(b, "alice/skills/", 1); !errors.Is(err, errBadListing) {
		t.Errorf("over max objects: err = %v", err)
	}
	if _, err := encodeListing(l, "bob/skills/"); err == nil {
		t.Error("encoding keys outside the prefix succeeded")
	}
}
