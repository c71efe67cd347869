package skillview

import (
	"crypto/sha256"
	"encoding/binary"
)

// Key builds the key of a kept reply from its fields, encoded so that no
// two sequences of fields encode alike.
type Key struct{ b []byte }

// Str adds a string field.
func (k *Key) Str(s string) *Key { k.b = AppendField(k.b, s); return k }

// Int adds an integer field.
func (k *Key) Int(n int64) *Key { k.b = binary.AppendVarint(k.b, n); return k }

// Bool adds a boolean field.
func (k *Key) Bool(v bool) *Key {
	if v {
		return k.Int(1)
	}
	return k.Int(0)
}

// Sum is the key: fixed-size whatever the fields (a query, a long list of
// disabled skills), so a bound on a cache of them counts keys exactly.
func (k *Key) Sum() string {
	sum := sha256.Sum256(k.b)
	return string(sum[:])
}
