// Package limits resolves the counts a request asks for (page sizes, result
// limits) against the server's limits, the same way for every RPC.
package limits

import (
	"fmt"

	"github.com/skillsvc/skillsvc/internal/errkind"
)

// MaxMessageBytes is the largest gRPC message: the server's receive cap, and
// the cap of a message copied by the in-process channel (server.InProcess).
const MaxMessageBytes = 16 << 20

// MaxJSONBodyBytes is the largest JSON request body the HTTP front ends
// (the gateway; MCP by default) accept: one MaxMessageBytes message with
// room for base64 (bytes fields grow by 4/3) and JSON syntax.
const MaxJSONBodyBytes = MaxMessageBytes * 3 / 2

// Integer is any integer type a request field or config value has.
type Integer interface {
	~int | ~int32 | ~int64
}

// Count resolves the requested n of field: negative is InvalidArgument, 0
// means def, and anything above max is max (asking for more than a server
// gives is not an error).
func Count[T Integer](field string, n, def, max T) (T, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("%w: %s must not be negative, got %d", errkind.InvalidArgument, field, n)
	case n == 0:
		return min(def, max), nil
	case n > max:
		return max, nil
	}
	return n, nil
}

// Within resolves n of field where exceeding max is the caller's mistake: 0
// means def, and a value outside 0..max is InvalidArgument.
func Within[T Integer](field string, n, def, max T) (T, error) {
	if n < 0 || n > max {
		return 0, fmt.Errorf("%w: %s must be 0..%d, got %d", errkind.InvalidArgument, field, max, n)
	}
	if n == 0 {
		return def, nil
	}
	return n, nil
}
