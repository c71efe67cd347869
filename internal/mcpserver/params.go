package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillsvc/skillsvc/internal/mcpserver/wire"
)

// readBody reads a POST body whole, at most --mcp.max-request-bytes, and
// puts it back for the SDK.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, tooLarge func(string)) ([]byte, bool) {
	// Sized once when the client says how much it sends (a large
	// write_file otherwise grows the buffer by doubling).
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= h.cfg.MaxRequestBytes {
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.cfg.MaxRequestBytes))
	body := buf.Bytes()
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		tooLarge(fmt.Sprintf("request body larger than %d bytes (--mcp.max-request-bytes)", h.cfg.MaxRequestBytes))
		return nil, false
	case err != nil:
		wire.WriteError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "reading the request body: "+err.Error())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, true
}

// Methods returns every method /mcp answers and whether it needs params,
// for tests that send each one malformed.
func Methods() map[string]bool { return wire.Methods() }
