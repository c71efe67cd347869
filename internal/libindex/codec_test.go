package libindex

import (
	"crypto/sha256"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

var (
	aliceLayer = Layer{Tag: "alice", Prefix: "alice/skills/", Object: "alice/settings/skills.index"}
	bobLayer   = Layer{Tag: "bob", Prefix: "bob/skills/", Object: "bob/settings/skills.index"}
)

// TestIndexCodec: an index round-trips (digests included), and every
// truncation, a count over the limit or a head or digest of an unknown
// object is refused, never a panic or a huge allocation.
func TestIndexCodec(t *testing.T) {
	mod := time.Date(2025, 3, 4, 5, 6, 7, 8, time.UTC)
	x := &Index{Gen: 1<<63 + 5, Listed: time.Unix(0, 1_700_000_000_123_456_789), Changed: time.Unix(0, 1_600_000_000_000_000_001), Objs: []objstore.Object{
		{Key: "alice/skills/a/SKILL.md", Attributes: objstore.Attributes{Size: 42, ETag: "e1", ModTime: mod}},
		{Key: "alice/skills/a/x.bin", Attributes: objstore.Attributes{Size: 0, ETag: ""}},
		{Key: "alice/skills/b/SKILL.md", Attributes: objstore.Attributes{Size: 7, ETag: "e2"}},
	}, Heads: SortedHeads(map[string][]byte{
		"alice/skills/a/SKILL.md": []byte("---\nname: a\n---\n"),
		"alice/skills/b/SKILL.md": {},
	}), Digests: SortedDigests(map[string]Digest{
		"alice/skills/a/SKILL.md": {Size: 42, Sum: sha256.Sum256([]byte("a")), Mode: 0o644},
		"alice/skills/a/x.bin":    {Size: 0, Sum: sha256.Sum256(nil), Mode: 0o755},
		"alice/skills/b/SKILL.md": {Size: skillmd.MaxSkillBytes, Sum: sha256.Sum256([]byte("b")), Mode: 0o644},
	})}
	b, err := encodeIndex(x, aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndex(b, aliceLayer, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got.Gen != x.Gen || !got.Listed.Equal(x.Listed) || !got.Changed.Equal(x.Changed) || !reflect.DeepEqual(got.Objs, x.Objs) || !reflect.DeepEqual(got.Heads, x.Heads) || !reflect.DeepEqual(got.Digests, x.Digests) {
		t.Errorf("round trip: %+v, want %+v", got, x)
	}
	for n := range len(b) {
		if _, err := DecodeIndex(b[:n], aliceLayer, 10); !errors.Is(err, errBadIndex) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := DecodeIndex(b, aliceLayer, 2); !errors.Is(err, errBadIndex) {
		t.Errorf("over max objects: err = %v", err)
	}
	if _, err := DecodeIndex(append(b, 0), aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("trailing byte: err = %v", err)
	}
	if _, err := encodeIndex(x, bobLayer); err == nil {
		t.Error("encoding keys outside the prefix succeeded")
	}
	// A head naming an object past the count.
	bad := &Index{Objs: x.Objs[:1], Heads: []Head{{Key: x.Objs[0].Key}}}
	b, _ = encodeIndex(bad, aliceLayer)
	b[len(b)-2] = 9 // the head's object number
	if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("head of object 9 of 1: err = %v", err)
	}
	// A digest naming an object past the count, and two digests of one.
	bad = &Index{Objs: x.Objs[:2], Digests: []KeyDigest{{Key: x.Objs[0].Key, Digest: Digest{Mode: 0o644}}}}
	b, _ = encodeIndex(bad, aliceLayer)
	at := len(b) - sha256.Size - 4 // the digest's object number, before its size (and after it the mode's 2 bytes)
	b[at] = 9
	if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("digest of object 9 of 2: err = %v", err)
	}
	bad.Digests = append(bad.Digests, KeyDigest{Key: x.Objs[1].Key, Digest: Digest{Mode: 0o644}})
	b, _ = encodeIndex(bad, aliceLayer)
	b[len(b)-sha256.Size-4] = 0 // the second digest's object number
	if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("two digests of object 0: err = %v", err)
	}
	// A negative size.
	bad = &Index{Objs: x.Objs[:1], Digests: []KeyDigest{{Key: x.Objs[0].Key, Digest: Digest{Size: -1, Mode: 0o644}}}}
	b, _ = encodeIndex(bad, aliceLayer)
	if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("digest of -1 bytes: err = %v", err)
	}
	// A size past what a hashed skill holds.
	b, _ = encodeIndex(&Index{Objs: x.Objs[:1], Digests: []KeyDigest{{Key: x.Objs[0].Key, Digest: Digest{Size: skillmd.MaxSkillBytes + 1, Mode: 0o644}}}}, aliceLayer)
	if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
		t.Errorf("digest of more than MaxSkillBytes: err = %v", err)
	}
	// A mode other than the two a file is served with.
	for _, mode := range []fs.FileMode{0, 0o600, 0o777} {
		bad = &Index{Objs: x.Objs[:1], Digests: []KeyDigest{{Key: x.Objs[0].Key, Digest: Digest{Mode: mode}}}}
		b, _ = encodeIndex(bad, aliceLayer)
		if _, err := DecodeIndex(b, aliceLayer, 10); !errors.Is(err, errBadIndex) {
			t.Errorf("digest of mode %#o: err = %v", mode, err)
		}
	}
}

// TestPersistedIndexBound: an index at --skills.max-objects, every object
// with a key of 1 KiB, the largest ETag S3 gives and a digest, and a head
// of MaxFrontmatterBytes per object, encodes within what fromBucket reads.
func TestPersistedIndexBound(t *testing.T) {
	const n = 8
	x := &Index{Gen: 1, Listed: time.Unix(0, 1)}
	for i := range n {
		key := aliceLayer.Prefix + strings.Repeat("k", 1<<10-len(aliceLayer.Prefix)-1) + string(rune('a'+i))
		x.Objs = append(x.Objs, objstore.Object{Key: key, Attributes: objstore.Attributes{
			Size: 1 << 62, ETag: strings.Repeat("e", 64) + "-10000", ModTime: time.Unix(1<<40, 999),
		}})
		x.Heads = append(x.Heads, Head{Key: key, Head: make([]byte, 64<<10)})
		x.Digests = append(x.Digests, KeyDigest{Key: key, Digest: Digest{Size: skillmd.MaxSkillBytes, Mode: 0o755}})
	}
	b, err := encodeIndex(x, aliceLayer)
	if err != nil {
		t.Fatal(err)
	}
	if limit := n * maxIndexBytesPerObject; len(b) > limit {
		t.Errorf("%d objects encode to %d bytes, over the %d bytes read", n, len(b), limit)
	}
}

// TestIndexCodecNamesLibrary: an index or stamp decodes only for the
// library it was encoded for; for another, even one whose keys it could
// hold (same prefix, another tag), it is errOtherLibrary. A record of the
// previous version, which named no library, is errIndexVersion: a miss.
func TestIndexCodecNamesLibrary(t *testing.T) {
	x := &Index{Gen: 7, Listed: time.Unix(0, 1_700_000_000_000_000_000), Objs: []objstore.Object{
		{Key: "bob/skills/secret/SKILL.md", Attributes: objstore.Attributes{Size: 3, ETag: "e"}},
	}, Heads: []Head{{Key: "bob/skills/secret/SKILL.md", Head: []byte("---\nname: secret\n---\n")}}}
	b, err := encodeIndex(x, bobLayer)
	if err != nil {
		t.Fatal(err)
	}
	st := encodeStamp(Stamp{Gen: x.Gen, Listed: x.Listed}, bobLayer)
	for _, tc := range []struct {
		name string
		l    Layer
	}{
		{"another user's", aliceLayer},
		{"the shared library's", Layer{Tag: SharedTag, Prefix: "_shared/skills/"}},
		{"same prefix, another tag", Layer{Tag: "alice", Prefix: bobLayer.Prefix}},
		{"same tag, another prefix", Layer{Tag: "bob", Prefix: "bob/other/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := DecodeIndex(b, tc.l, 10); !errors.Is(err, errOtherLibrary) {
				t.Errorf("DecodeIndex = %+v, %v; want errOtherLibrary", got, err)
			}
			if got, err := DecodeStamp(st, tc.l); !errors.Is(err, errOtherLibrary) {
				t.Errorf("DecodeStamp = %+v, %v; want errOtherLibrary", got, err)
			}
		})
	}
	if _, err := DecodeIndex(b, bobLayer, 10); err != nil {
		t.Errorf("DecodeIndex for its own library: %v", err)
	}

	// Version 4, which had no change time: a miss, not a fault.
	v4 := append([]byte{4}, b[1:]...)
	if _, err := DecodeIndex(v4, bobLayer, 10); !errors.Is(err, errIndexVersion) {
		t.Errorf("version 4 record: err = %v, want errIndexVersion", err)
	}
	// Version 2: version, gen, listed, count, no library.
	v2 := []byte{2, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0}
	if _, err := DecodeIndex(v2, aliceLayer, 10); !errors.Is(err, errIndexVersion) || !errors.Is(err, errBadIndex) {
		t.Errorf("version 2 record: err = %v, want errIndexVersion", err)
	}
}

func TestStampCodec(t *testing.T) {
	s := Stamp{Gen: 42, Listed: time.Unix(0, 1_700_000_000_123_456_789)}
	b := encodeStamp(s, aliceLayer)
	got, err := DecodeStamp(b, aliceLayer)
	if err != nil || got.Gen != s.Gen || !got.Listed.Equal(s.Listed) {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for n := range len(b) {
		if _, err := DecodeStamp(b[:n], aliceLayer); !errors.Is(err, errBadIndex) {
			t.Errorf("truncated to %d bytes: err = %v", n, err)
		}
	}
	if _, err := DecodeStamp(append(b, 0), aliceLayer); !errors.Is(err, errBadIndex) {
		t.Errorf("trailing byte: err = %v", err)
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
