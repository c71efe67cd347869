package skillrun

import (
	"bytes"
	"encoding/json"
)

// ParseOutput returns the one JSON object stdout holds, white space around
// it allowed, and false for anything else: no output, several values, an
// array, a string, text around the object.
func ParseOutput(stdout []byte) (json.RawMessage, bool) {
	b := bytes.TrimSpace(stdout)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil, false
	}
	return json.RawMessage(b), true
}

// clip returns b cut to n bytes, marked, for an error message.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
