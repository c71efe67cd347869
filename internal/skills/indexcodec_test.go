package skills

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

var (
	aliceLayer = layer{tag: "alice", prefix: "alice/skills/", object: "alice/settings/skills.index"}
	bobLayer   = layer{tag: "bob", prefix: "bob/skills/", object: "bob/settings/skills.index"}
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
	b, err := encodeIndex(x, aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeIndex(b, aliceLayer, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.gen != x.gen || !got.listed.Equal(x.listed) || !reflect.DeepEqual(got.objs, x.objs) || !reflect.DeepEqual(got.heads, x.heads) {
		t.Errorf("round trip: %+v, want %+v", got, x)
	}
	for n := range len(b) {
		if _, err := decodeIndex(b[:n], aliceLayer, 10); !errors.Is(err, errBadIndex) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := decodeIndex(b, aliceLayer, 2); !errors.Is(err, errBadIndex) {
		t.Errorf("over max objects: err = %v", err)
	}
	if _, err := decodeIndex(append(b, 0), aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("trailing byte: err = %v", err)
	}
	if _, err := encodeIndex(x, bobLayer); err == nil {
		t.Error("encoding keys outside the prefix succeeded")
	}
	// A head naming an object past the count.
	bad := &index{objs: x.objs[:1], heads: map[string][]byte{x.objs[0].Key: nil}}
	b, _ = encodeIndex(bad, aliceLayer)
	b[len(b)-2] = 9 // the head's object number
	if _, err := decodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("head of object 9 of 1: err = %v", err)
	}
}

// TestIndexCodecNamesLibrary: an index or stamp decodes only for the
// library it was encoded for; for another, even one whose keys it could
// hold (same prefix, another tag), it is errOtherLibrary. A record of the
// previous version, which named no library, is errIndexVersion: a miss.
func TestIndexCodecNamesLibrary(t *testing.T) {
	x := &index{gen: 7, listed: time.Unix(0, 1_700_000_000_000_000_000), objs: []objstore.Object{
		{Key: "bob/skills/secret/SKILL.md", Attributes: objstore.Attributes{Size: 3, ETag: "e"}},
	}, heads: map[string][]byte{"bob/skills/secret/SKILL.md": []byte("---\nname: secret\n---\n")}}
	b, err := encodeIndex(x, bobLayer)
	if err != nil {
		t.Fatal(err)
	}
	st := encodeStamp(stamp{gen: x.gen, listed: x.listed}, bobLayer)
	for _, tc := range []struct {
		name string
		l    layer
	}{
		{"another user's", aliceLayer},
		{"the shared library's", layer{tag: sharedTag, prefix: "_shared/skills/"}},
		{"same prefix, another tag", layer{tag: "alice", prefix: bobLayer.prefix}},
		{"same tag, another prefix", layer{tag: "bob", prefix: "bob/other/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := decodeIndex(b, tc.l, 10); !errors.Is(err, errOtherLibrary) {
				t.Errorf("decodeIndex = %+v, %v; want errOtherLibrary", got, err)
			}
			if got, err := decodeStamp(st, tc.l); !errors.Is(err, errOtherLibrary) {
				t.Errorf("decodeStamp = %+v, %v; want errOtherLibrary", got, err)
			}
		})
	}
	if _, err := decodeIndex(b, bobLayer, 10); err != nil {
		t.Errorf("decodeIndex for its own library: %v", err)
	}

	// Version 2: version, gen, listed, count, no library.
	v2 := []byte{2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0}
	if _, err := decodeIndex(v2, aliceLayer, 10); !errors.Is(err, errIndexVersion) || !errors.Is(err, errBadIndex) {
		t.Errorf("version 2 record: err = %v, want errIndexVersion", err)
	}
}

func TestStampCodec(t *testing.T) {
	s := stamp{gen: 42, listed: time.Unix(0, 1_700_000_000_123_456_789)}
	b := encodeStamp(s, aliceLayer)
	got, err := decodeStamp(b, aliceLayer)
	if err != nil || got.gen != s.gen || !got.listed.Equal(s.listed) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for n := range len(b) {
		if _, err := decodeStamp(b[:n], aliceLayer); !errors.Is(err, errBadIndex) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := decodeStamp(append(b, 0), aliceLayer); !errors.Is(err, errBadIndex) {
		t.Errorf("trailing byte: err = %v", err)
	}
}

// TestSettingsCodec: cached settings apply only to the user they name; a
// value naming none (an older replica's) is a plain miss.
func TestSettingsCodec(t *testing.T) {
	b, _ := json.Marshal(cachedSettings{User: "bob", settings: settings{Disabled: []string{"pdf"}}})
	if s, err := decodeSettings(b, "bob"); err != nil || !reflect.DeepEqual(s.Disabled, []string{"pdf"}) {
		t.Errorf("bob's own: %+v, %v", s, err)
	}
	if s, err := decodeSettings(b, "alice"); !errors.Is(err, errOtherUser) {
		t.Errorf("bob's under alice's key: %+v, %v; want errOtherUser", s, err)
	}
	if s, err := decodeSettings([]byte(`{"disabled":["pdf"]}`), "alice"); err == nil || errors.Is(err, errOtherUser) {
		t.Errorf("a value naming no user: %+v, %v; want a miss", s, err)
	}
	if _, err := decodeSettings([]byte(`{`), "alice"); err == nil || errors.Is(err, errOtherUser) {
		t.Errorf("a malformed value: %v; want a miss", err)
	}
}

// TestContentKeysNameTheObject: cached file contents, sniffs and heads are
// addressed by the whole object key and its ETag, so the same file (same
// relative path, same ETag: the local backend's ETag is a content hash) in
// two libraries never shares an entry, and each user's lies in their slot.
func TestContentKeysNameTheObject(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(key, etag string) string
	}{
		{"file", fileCacheKey},
		{"sniff", sniffCacheKey},
		{"head", func(key, etag string) string { tag, _, _ := strings.Cut(key, "/"); return headCacheKey(tag, key, etag) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.key("alice/skills/pdf/SKILL.md", "e1"), tc.key("bob/skills/pdf/SKILL.md", "e1")
			if a == b {
				t.Errorf("alice's and bob's SKILL.md share the key %s", a)
			}
			if !strings.Contains(a, "{alice}") || !strings.Contains(b, "{bob}") {
				t.Errorf("keys %s, %s are not in their user's slot", a, b)
			}
			if tc.key("alice/skills/pdf/SKILL.md", "e2") == a {
				t.Error("two versions share a key")
			}
		})
	}
}
