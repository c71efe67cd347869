// Package requestid gives every call an ID that ties its log lines, audit
// record and the client's view together. A well-formed x-request-id from
// the caller (a proxy's, say) is kept; anything else is replaced.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Key is the header carrying the ID, in requests and responses.
const Key = "x-request-id"

const maxLen = 64

type ctxKey struct{}

// NewContext returns ctx carrying id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the call's ID, or "" outside a call.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Pick returns the caller's ID when it is one value of at most 64
// characters from [A-Za-z0-9._:-], and a new random one otherwise, so an ID
// is always safe to log and echo.
func Pick(given []string) string {
	if len(given) == 1 && valid(given[0]) {
		return given[0]
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

func valid(s string) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
