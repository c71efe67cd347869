// Package mcptest speaks raw Streamable HTTP to /mcp for tests that send
// what no SDK client would: malformed messages, foreign sessions, floods.
package mcptest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Initialize is an initialize request any server version accepts.
const Initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// Initialized is the notification that completes the handshake.
const Initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// Message is a decoded JSON-RPC message.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// Reply decodes the last JSON-RPC message of an answer, plain JSON or a
// stream of server-sent events; nil when the answer carries none.
func Reply(contentType string, body []byte) (*Message, error) {
	data := string(body)
	if strings.HasPrefix(contentType, "text/event-stream") {
		data = ""
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	} else if !strings.HasPrefix(contentType, "application/json") {
		return nil, nil
	}
	if strings.TrimSpace(data) == "" {
		return nil, nil
	}
	var m Message
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		return nil, fmt.Errorf("answer is not JSON: %v: %.200q", err, data)
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("answer is not JSON-RPC 2.0: %.200q", data)
	}
	return &m, nil
}

// Client is an HTTP client that sends h (identity headers, a bearer
// token) on every request, as a host configured with headers does.
func Client(h http.Header) *http.Client {
	return &http.Client{Transport: withHeaders{h, http.DefaultTransport}}
}

type withHeaders struct {
	h    http.Header
	next http.RoundTripper
}

func (w withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range w.h {
		r.Header[k] = v
	}
	return w.next.RoundTrip(r)
}
