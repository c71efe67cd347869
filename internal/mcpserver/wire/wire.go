// Package wire checks the JSON-RPC messages of an /mcp request before the
// MCP SDK sees them, and writes the JSON-RPC errors the edge answers
// itself.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Every JSON-RPC message is checked against its method before the SDK sees
// it, so no handler runs on params it cannot use: an unknown method is
// -32601, and params that are missing or null where the method needs them,
// or that are not an object, are -32602. (The SDK alone would answer a
// plain-text HTTP 400 for some and hand nil params to custom methods.)

// methodParams is every method the server answers, and whether it needs
// params (the MCP schema's required "params"; skills/get's and
// resources/directory/read's from the skills extension).
var methodParams = map[string]bool{
	"initialize":                       true,
	"ping":                             false,
	"server/discover":                  false,
	"tools/list":                       false,
	"tools/call":                       true,
	"resources/list":                   false,
	"resources/templates/list":         false,
	"resources/read":                   true,
	"resources/directory/read":         true,
	"resources/subscribe":              true,
	"resources/unsubscribe":            true,
	"subscriptions/listen":             true,
	"completion/complete":              true,
	"logging/setLevel":                 true,
	"notifications/initialized":        false,
	"notifications/cancelled":          false,
	"notifications/roots/list_changed": false,
	"notifications/progress":           true,
	"skills/list":                      false,
	"skills/get":                       true,
}

// message is what the check reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params paramsKind      `json:"params"`
}

// paramsKind is the first byte of the params value ('{', '[', 'n' for null,
// …), 0 when absent. Decoding it copies nothing, however large the params.
type paramsKind byte

func (k *paramsKind) UnmarshalJSON(b []byte) error {
	*k = paramsKind(b[0])
	return nil
}

// Info is what the edge needs to know of a body's messages.
type Info struct {
	Opens bool            // it holds an initialize request, which opens a session
	Calls int             // requests (messages with an ID), each one unit of the caller's limits
	ID    json.RawMessage // the ID of its one request, when it is a single message
}

// maxBatch bounds the messages of one batch (older protocol revisions
// allow batches; hosts send a few): each is a decoded message and a unit of
// the caller's limits, and a body of "{}," repeated would otherwise decode
// into millions of them.
const maxBatch = 64

var errBatchTooLarge = fmt.Errorf("invalid request: a batch holds at most %d messages", maxBatch)

// decodeBody decodes a body's message, or a batch's messages one at a
// time so a batch is refused before it is all decoded.
func decodeBody(body []byte) ([]message, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		msgs := make([]message, 1)
		return msgs, json.Unmarshal(body, &msgs[0])
	}
	if !json.Valid(body) {
		var v struct{}
		return nil, json.Unmarshal(body, &v) // the syntax error, without decoding anything
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.Token() // [
	var msgs []message
	for dec.More() {
		if len(msgs) == maxBatch {
			return nil, errBatchTooLarge
		}
		var m message
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Check answers the first malformed message of body and reports
// whether it did. modern is a sessionless (2026-07-28) request, where an
// unknown method is HTTP 404 as well as -32601.
func Check(w http.ResponseWriter, body []byte, modern bool) (info Info, rejected bool) {
	msgs, err := decodeBody(body)
	var syntax *json.SyntaxError
	switch {
	case errors.Is(err, errBatchTooLarge):
		WriteError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, err.Error())
		return info, true
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		WriteError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, "parse error: the body is not JSON: "+err.Error())
		return info, true
	case err != nil:
		WriteError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC message: "+err.Error())
		return info, true
	}
	for _, m := range msgs {
		if m.Method == nil {
			continue // a response to a request the server sent; the SDK checks it
		}
		call := len(m.ID) > 0 && string(m.ID) != "null"
		code, msg := checkParams(*m.Method, m.Params)
		if code == 0 {
			if call {
				info.Calls++
				info.Opens = info.Opens || *m.Method == "initialize"
				if len(msgs) == 1 {
					info.ID = m.ID
				}
			}
			continue
		}
		if call && len(msgs) == 1 {
			// A request's error is its answer, as any JSON-RPC error.
			httpCode := http.StatusOK
			if modern && code == jsonrpc.CodeMethodNotFound {
				httpCode = http.StatusNotFound
			}
			WriteError(w, httpCode, m.ID, code, msg)
		} else {
			// A notification gets no answer; the transport says to refuse
			// the POST (a batch is refused whole).
			WriteError(w, http.StatusBadRequest, nil, code, msg)
		}
		return info, true
	}
	return info, false
}

func checkParams(method string, params paramsKind) (int64, string) {
	required, ok := methodParams[method]
	switch {
	case !ok:
		return jsonrpc.CodeMethodNotFound, fmt.Sprintf("method not found: %.100q", method)
	case params == 0 || params == 'n':
		if required {
			return jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: %s needs params (an object)", method)
		}
	case params != '{':
		return jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: %s params must be an object", method)
	}
	return 0, ""
}

// WriteError writes a JSON-RPC error response; id is nil when the
// request's is unknown.
func WriteError(w http.ResponseWriter, httpCode int, id json.RawMessage, code int64, msg string) {
	WriteErrorData(w, httpCode, id, code, msg, nil)
}

// WriteErrorData is WriteError with the error's data.
func WriteErrorData(w http.ResponseWriter, httpCode int, id json.RawMessage, code int64, msg string, data json.RawMessage) {
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		id = json.RawMessage("null") // unknown, or not an ID JSON-RPC allows
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg, Data: data}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpCode)
	w.Write(body)
}

// Methods returns every method /mcp answers and whether it needs params,
// for tests that send each one malformed.
func Methods() map[string]bool { return maps.Clone(methodParams) }
