package libindex

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// Index is one library layer as last listed: every object, the frontmatter
// head of every SKILL.md that is a skill, and the digest of every file of a
// skill within the MCP extension's limits. It is the unit of
// caching: kept decoded in process, encoded in the shared cache (so every
// replica reuses one listing) and persisted in the bucket (so a replica
// with an empty cache starts from it instead of reading every SKILL.md).
// Nothing changes an index once made; concurrent callers share it, and
// must not change it either.
type Index struct {
	// Gen identifies the content on every replica: a revalidation that
	// finds nothing changed keeps it, so views built from it stay current.
	Gen    uint64
	Listed time.Time // when the listing was taken
	// Took is how long the revalidation that made it took on this replica
	// (0: unknown): a library that takes long to list is served stale for
	// longer while it is listed in the background (maxStale).
	Took time.Duration
	// Changed is when a listing first found this content (Gen): a
	// library's first listing, or one that found it changed. It travels
	// with the index, so every replica gives a library the same
	// revalidation interval (FreshFor).
	Changed time.Time
	Objs    []objstore.Object // in key order
	// Heads holds the head of each skill's SKILL.md as of its listed ETag,
	// cut after the frontmatter, by key. A skill without one was deleted
	// between the listing and the read of its head.
	Heads []Head
	// Digests holds the digest of each file of every skill within the MCP
	// extension's limits (skillmd.OverLimits), by key, computed once per
	// listed version (key and ETag): a revalidation carries the previous
	// index's over for an unchanged ETag, by key. A file deleted between
	// the listing and its read has none.
	Digests []KeyDigest
}

// Heads and digests are sorted slices, not maps, their keys the strings of
// Objs: a user's index of a few skills is held by the thousand, and a map
// costs several times its entries.

// Head is the head of the SKILL.md at Key.
type Head struct {
	Key  string
	Head []byte
}

// KeyDigest is the digest of the file at Key.
type KeyDigest struct {
	Key string
	Digest
}

// HeadOf returns the head x holds of the SKILL.md at key.
func (x *Index) HeadOf(key string) ([]byte, bool) {
	i, ok := slices.BinarySearchFunc(x.Heads, key, func(h Head, k string) int { return strings.Compare(h.Key, k) })
	if !ok {
		return nil, false
	}
	return x.Heads[i].Head, true
}

// DigestOf returns the digest x holds of the file at key.
func (x *Index) DigestOf(key string) (Digest, bool) {
	i, ok := slices.BinarySearchFunc(x.Digests, key, func(d KeyDigest, k string) int { return strings.Compare(d.Key, k) })
	if !ok {
		return Digest{}, false
	}
	return x.Digests[i].Digest, true
}

// SortedHeads returns heads by key as an index holds them.
func SortedHeads(heads map[string][]byte) []Head {
	out := make([]Head, 0, len(heads))
	for k, h := range heads {
		out = append(out, Head{Key: k, Head: h})
	}
	slices.SortFunc(out, func(a, b Head) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// SortedDigests returns digests by key as an index holds them.
func SortedDigests(digests map[string]Digest) []KeyDigest {
	out := make([]KeyDigest, 0, len(digests))
	for k, dg := range digests {
		out = append(out, KeyDigest{Key: k, Digest: dg})
	}
	slices.SortFunc(out, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Layer is one library: a user's, or the shared one.
type Layer struct {
	Tag    string // the user, or SharedTag: the hash tag of its cache keys
	Prefix string // of its objects
	Object string // its persisted index
	// Side is an object outside the library read with it (the names of
	// its protected skills): listed in the index's Objs when it exists, so
	// its version is part of the index's content and generation.
	Side string
}

// Skill is one skill folder among a library's objects.
type Skill struct {
	SkillMD objstore.Object   // whose head an index holds
	Files   []objstore.Object // every file the skill serves, SKILL.md included
}

// skillsOf returns the skills among a library's objects (under prefix, in
// key order), at most max (0: all): the SKILL.md files whose heads an index
// holds and the files whose digests it holds. Which folders are skills is
// skillmd.FindFolders' rule, the one the catalog's views apply, so an index
// holds the heads and digests a view reads; keys no virtual path can name
// are left out, as views leave them.
func skillsOf(objs []objstore.Object, prefix string, max int) []Skill {
	rels := make([]string, 0, len(objs))
	keep := make([]objstore.Object, 0, len(objs))
	for _, o := range objs {
		// An index also lists its library's side object, outside the prefix.
		if rel, ok := strings.CutPrefix(o.Key, prefix); ok && mounts.Addressable(rel) {
			rels = append(rels, rel)
			keep = append(keep, o)
		}
	}
	if max <= 0 {
		max = len(rels)
	}
	folders, _ := skillmd.FindFolders(len(rels), func(i int) string { return rels[i] }, max)
	out := make([]Skill, len(folders))
	for i, f := range folders {
		out[i] = Skill{SkillMD: keep[f.SkillMD], Files: keep[f.Lo:f.Hi:f.Hi]}
	}
	return out
}

// listTimeout bounds one load or revalidation of a library.
const listTimeout = time.Minute

var errTooManyObjects = errors.New("too many objects")

// maxIndexBytesPerObject bounds one object's share of an encoded index: a
// key of at most 1 KiB, its ETag and numbers, a frontmatter head of at
// most MaxFrontmatterBytes, and a digest.
const maxIndexBytesPerObject = 2<<10 + skillmd.MaxFrontmatterBytes + digestBytes

// head returns the head x holds of o's listed version; x may be nil.
func (x *Index) head(o objstore.Object) ([]byte, bool) {
	if x == nil {
		return nil, false
	}
	h, ok := x.HeadOf(o.Key)
	return h, ok && x.etag(o.Key) == o.ETag
}

// digest returns the digest x holds of o's listed version; x may be nil.
// A file without an ETag names no version, so it is hashed again.
func (x *Index) digest(o objstore.Object) (Digest, bool) {
	if x == nil || o.ETag == "" {
		return Digest{}, false
	}
	dg, ok := x.DigestOf(o.Key)
	return dg, ok && x.etag(o.Key) == o.ETag
}

// etag is the listed ETag of key, or "".
func (x *Index) etag(key string) string {
	i, ok := x.object(key)
	if !ok {
		return ""
	}
	return x.Objs[i].ETag
}

// object returns the number in Objs of the object at key.
func (x *Index) object(key string) (int, bool) {
	return slices.BinarySearchFunc(x.Objs, key, func(o objstore.Object, k string) int { return strings.Compare(o.Key, k) })
}

// same reports whether y holds the same objects, heads and digests as x.
func (x *Index) same(y *Index) bool {
	if len(x.Objs) != len(y.Objs) || len(x.Heads) != len(y.Heads) || len(x.Digests) != len(y.Digests) {
		return false
	}
	for i, o := range x.Objs {
		p := y.Objs[i]
		if o.Key != p.Key || o.ETag != p.ETag || o.Size != p.Size || !o.ModTime.Equal(p.ModTime) {
			return false
		}
	}
	for i, h := range x.Heads {
		if g := y.Heads[i]; g.Key != h.Key || !bytes.Equal(g.Head, h.Head) {
			return false
		}
	}
	for i, dg := range x.Digests {
		if y.Digests[i] != dg {
			return false
		}
	}
	return true
}
