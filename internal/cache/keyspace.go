package cache

import (
	"crypto/sha256"
	"encoding/hex"
)

// Keyspace binds what a deployment keeps in a shared Redis to that
// deployment: its storage (the S3 endpoint and bucket, or the local
// directory), whose digest it holds. Redis puts it after the key prefix in
// every key, lock and pub/sub channel, and before every value, so two
// deployments sharing a Redis never read each other's entries, whatever
// prefix each was given; a value found under one of its keys that is not
// framed with it (another deployment's, or a binary's without a keyspace)
// is refused as a miss and counted. The zero Keyspace binds nothing (tools
// and tests that own their Redis).
type Keyspace struct {
	id string // sha256 of the storage identity, first idLen bytes; "" binds nothing
}

// idLen is the digest's length: 128 bits, so no configuration can make two
// deployments' digests equal by chance or by choice.
const idLen = 16

// NewKeyspace returns the keyspace of the deployment whose storage is named
// by storage, a string every replica of it computes alike.
func NewKeyspace(storage string) Keyspace {
	sum := sha256.Sum256([]byte(storage))
	return Keyspace{id: string(sum[:idLen])}
}

// String is the digest in hex, for logs: it names the storage without
// showing it.
func (k Keyspace) String() string { return hex.EncodeToString([]byte(k.id)) }

// keyPrefix goes after the configured key prefix (no hash tag: the
// caller's {…} picks the slot).
func (k Keyspace) keyPrefix() string {
	if k.id == "" {
		return ""
	}
	return "d" + k.String() + ":"
}

// frame returns v with the keyspace in front.
func (k Keyspace) frame(v []byte) []byte {
	if k.id == "" {
		return v
	}
	out := make([]byte, 0, len(k.id)+len(v))
	return append(append(out, k.id...), v...)
}

// unframe returns the value v framed, false when another keyspace (or none)
// framed it.
func (k Keyspace) unframe(v []byte) ([]byte, bool) {
	if k.id == "" {
		return v, true
	}
	if len(v) < len(k.id) || string(v[:len(k.id)]) != k.id {
		return nil, false
	}
	return v[len(k.id):], true
}

// unframeString is unframe of a reply Redis gave as a string, copying only
// the value.
func (k Keyspace) unframeString(s string) ([]byte, bool) {
	if k.id == "" {
		return []byte(s), true
	}
	if len(s) < len(k.id) || s[:len(k.id)] != k.id {
		return nil, false
	}
	return []byte(s[len(k.id):]), true
}
