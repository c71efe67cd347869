package libindex

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/skillsvc/skillsvc/internal/objstore"
)

// Keys in the shared cache. The user (or SharedTag for the organization's
// library) is a Redis hash tag, so one user's keys share a Cluster slot; the
// version names the encoding, so replicas of another version never read them
// (an index costs them a listing). The catalog's settings keys follow the
// same shape (skills.settingsCacheKey).
const (
	SharedTag      = "_shared" // never a user ID, which starts with a letter or digit
	indexKeySpace  = "skills:v6:index:"
	stampKeySpace  = "skills:v6:stamp:"
	lockKeySpace   = "skills:v6:revalidate:"
	headKeySpace   = "skills:v1:head:"
	digestKeySpace = "skills:v2:digest:" // v2: with the file's mode
	fileKeySpace   = "skills:v2:file:"   // v2: the mode, then the content
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

// listedVersion names the version of o its listing shows, for the caches
// that hold what a read of it returns besides its bytes (its mode): the
// ETag and the listed time, which a write of the same bytes with another
// mode changes although the ETag stays.
func listedVersion(o objstore.Object) string {
	if o.ModTime.IsZero() {
		return o.ETag
	}
	return o.ETag + "\x00" + strconv.FormatInt(o.ModTime.UnixNano(), 10)
}

func versionKey(space, tag, key, etag string) string {
	sum := sha256.Sum256([]byte(key + "\x00" + etag))
	return space + "{" + tag + "}:" + hex.EncodeToString(sum[:16])
}
