// Package pagetoken is the one page-token format of every paged RPC: opaque
// to callers, and bound to the query that made it, so a token cannot be
// replayed against another path, category or filter.
package pagetoken

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

type token struct {
	Scope    string `json:"s"`
	Position string `json:"p"`
}

// Encode returns a token that continues a listing of scope (whatever
// identifies the query: a path, filters) at position; "" when position is ""
// (the listing is complete).
func Encode(scope, position string) string {
	if position == "" {
		return ""
	}
	data, _ := json.Marshal(token{Scope: scope, Position: position})
	return base64.RawURLEncoding.EncodeToString(data)
}

// Decode returns the position of a token Encode made for the same scope; ""
// for the empty token (the first page). Anything else is InvalidArgument.
func Decode(scope, s string) (string, error) {
	if s == "" {
		return "", nil
	}
	var t token
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(data, &t)
	}
	if err != nil || t.Scope != scope || t.Position == "" {
		return "", fmt.Errorf("%w: page_token does not belong to this listing (%s)", errkind.InvalidArgument, scope)
	}
	return t.Position, nil
}
