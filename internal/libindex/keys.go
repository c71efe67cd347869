package libindex

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Keys in the shared cache. The user (or SharedTag for the organization's
// library) is a Redis hash tag, so one user's keys share a Cluster slot; the
// version names the encoding, so replicas of another version never read them
// (an index costs them a listing). The catalog's settings keys follow the
// same shape (skills.settingsCacheKey).
const (
	SharedTag      = "_shared" // never a user ID, which starts with a letter or digit
	indexKeySpace  = "skills:v5:index:"
	stampKeySpace  = "skills:v5:stamp:"
	lockKeySpace   = "skills:v5:revalidate:"
	headKeySpace   = "skills:v1:head:"
	digestKeySpace = "skills:v1:digest:"
	fileKeySpace   = "skills:v1:file:"
	sniffKeySpace  = "skills:v1:sniff:"
)

// IndexKey names the cached index of l.
func IndexKey(l Layer) string { return indexKeySpace + "{" + l.Tag + "}:" + l.Prefix }

// StampKey names the stamp of l's newest index.
func StampKey(l Layer) string { return stampKeySpace + "{" + l.Tag + "}:" + l.Prefix }

// LockKey names the lock of the replica revalidating l's index.
func LockKey(l Layer) string { return lockKeySpace + "{" + l.Tag + "}:" + l.Prefix }

// fileCacheKey and sniffCacheKey name the cached content of one version of
// a file, and whether it is binary; the key's first segment (the user, or
// the shared library's) is the hash tag.
func fileCacheKey(key, etag string) string  { return contentKey(fileKeySpace, key, etag) }
func sniffCacheKey(key, etag string) string { return contentKey(sniffKeySpace, key, etag) }

func contentKey(space, key, etag string) string {
	tag, _, _ := strings.Cut(key, "/")
	return versionKey(space, tag, key, etag)
}

// headCacheKey and digestCacheKey name the cached head of one version of a
// SKILL.md and the digest of one version of a skill file. Object keys may
// be 1 KiB long, so the key is a hash: bounded, whatever the key holds.
func headCacheKey(tag, key, etag string) string   { return versionKey(headKeySpace, tag, key, etag) }
func digestCacheKey(tag, key, etag string) string { return versionKey(digestKeySpace, tag, key, etag) }

func versionKey(space, tag, key, etag string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + etag))
	return space + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
}
