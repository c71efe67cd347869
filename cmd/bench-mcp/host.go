package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"

	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/mcpserver/mcptest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

const (
	// codeLimited is skillsvc's JSON-RPC error for a request over the
	// caller's per-user limits; its data carries retryAfterMs.
	codeLimited = -32000
	// maxAttempts bounds the retries of one refused request.
	maxAttempts = 50
	// minRetryDelay is the wait after a refusal that names no delay.
	minRetryDelay   = 10 * time.Millisecond
	skillsExtension = "io.modelcontextprotocol/skills"
)

// host speaks MCP to skillsvc's /mcp as an agent host does: Streamable
// HTTP, one JSON-RPC request at a time, the identity headers of skillsvc's
// default (insecure) mode on every request, and the session and protocol
// version from initialize on. Requests are paced to stay under the per-user
// rate limit; a refusal anyway is counted and retried after the delay the
// server asks for.
type host struct {
	endpoint string
	client   *http.Client
	identity http.Header
	pace     *rate.Limiter
	protocol string // asked for in initialize; the server's answer afterwards
	session  string
	nextID   int64
}

func newHost(endpoint, user, thread, protocol string, perSecond float64, burst int) *host {
	id := http.Header{}
	id.Set(auth.UserKey, user)
	id.Set(auth.ThreadKey, thread)
	return &host{
		endpoint: endpoint,
		client:   &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}},
		identity: id,
		pace:     rate.NewLimiter(rate.Limit(perSecond), burst),
		protocol: protocol,
	}
}

// phase collects what the requests of one row of the table did.
type phase struct {
	name      string
	requests  string          // what was sent, for the table
	latencies []time.Duration // of the requests that succeeded
	failures  int             // requests that failed, and answers that were wrong
	refusals  int             // refusals by the per-user limits (each retried)
	messages  []string        // the first few failures
	wall      time.Duration
	storage   testserver.S3Counts // S3 requests by operation while the row ran
	redis     int64               // Redis commands while the row ran
	pageSize  int                 // skills on the first skills/list page
}

const maxMessages = 5

// fail counts a failure and keeps its message if it is among the first.
func (p *phase) fail(format string, args ...any) {
	p.failures++
	if len(p.messages) < maxMessages {
		p.messages = append(p.messages, fmt.Sprintf(format, args...))
	}
}

// errCounted marks an error call already counted in its phase.
type errCounted struct{ err error }

func (e errCounted) Error() string { return e.err.Error() }
func (e errCounted) Unwrap() error { return e.err }

// refusal is an answer saying the per-user limits refused the request.
type refusal struct{ retryAfter time.Duration }

func (refusal) Error() string { return "refused by the per-user limits" }

// initialize opens a session: initialize, then notifications/initialized.
// It checks that the server offers the skills extension.
func (h *host) initialize(ctx context.Context, ph *phase) error {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	params := map[string]any{
		"protocolVersion": h.protocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "bench-mcp", "version": "1"},
	}
	h.session = ""
	if err := h.call(ctx, ph, "initialize", params, &res); err != nil {
		return err
	}
	if h.session == "" {
		ph.fail("initialize: no Mcp-Session-Id in the answer")
		return errCounted{errors.New("no session")}
	}
	if _, ok := res.Capabilities.Extensions[skillsExtension]; !ok {
		ph.fail("initialize: the server does not offer %s", skillsExtension)
		return errCounted{errors.New("no skills extension")}
	}
	h.protocol = res.ProtocolVersion
	return h.call(ctx, ph, "notifications/initialized", nil, nil)
}

// call sends one request (or, without out, a notification) and decodes its
// result into out. Each attempt waits for the pace; a refusal is counted
// and retried after its delay; any other failure is counted and returned
// as errCounted.
func (h *host) call(ctx context.Context, ph *phase, method string, params, out any) error {
	for attempt := 1; ; attempt++ {
		if err := h.pace.Wait(ctx); err != nil {
			return err
		}
		start := time.Now()
		result, err := h.post(ctx, method, params, out != nil)
		var ref refusal
		switch {
		case errors.As(err, &ref):
			ph.refusals++
			if attempt == maxAttempts {
				ph.fail("%s: refused %d times in a row", method, attempt)
				return errCounted{err}
			}
			t := time.NewTimer(max(ref.retryAfter, minRetryDelay))
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		case err != nil:
			ph.fail("%s: %v", method, err)
			return errCounted{err}
		}
		if out != nil {
			if err := json.Unmarshal(result, out); err != nil {
				ph.fail("%s: decoding the result: %v", method, err)
				return errCounted{err}
			}
		}
		ph.latencies = append(ph.latencies, time.Since(start))
		return nil
	}
}

// post sends one JSON-RPC message (a request when isRequest) and returns
// its result, a refusal, or why it failed.
func (h *host) post(ctx context.Context, method string, params any, isRequest bool) (json.RawMessage, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if isRequest {
		h.nextID++
		msg["id"] = h.nextID
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range h.identity {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", h.protocol)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	reply, perr := mcptest.Reply(resp.Header.Get("Content-Type"), data)
	if reply != nil && reply.Error != nil && reply.Error.Code == codeLimited {
		return nil, refusalOf(reply.Error.Data, resp.Header)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, refusalOf(nil, resp.Header)
	case !isRequest && resp.StatusCode == http.StatusAccepted:
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, data)
	case perr != nil:
		return nil, perr
	case reply == nil:
		return nil, fmt.Errorf("no JSON-RPC answer (%s): %.200s", resp.Header.Get("Content-Type"), data)
	case reply.Error != nil:
		return nil, fmt.Errorf("JSON-RPC error %d: %.300s", reply.Error.Code, reply.Error.Message)
	}
	if method == "initialize" {
		h.session = resp.Header.Get("Mcp-Session-Id")
	}
	return reply.Result, nil
}

// refusalOf reads the retry delay from the error's data.retryAfterMs, else
// from Retry-After (whole seconds, rounded up: skillsvc says 1 when
// retryAfterMs is 0, a wait under a millisecond).
func refusalOf(data json.RawMessage, hdr http.Header) refusal {
	var d struct {
		RetryAfterMs *int64 `json:"retryAfterMs"`
	}
	if json.Unmarshal(data, &d) == nil && d.RetryAfterMs != nil {
		return refusal{time.Duration(*d.RetryAfterMs) * time.Millisecond}
	}
	if s, err := strconv.Atoi(hdr.Get("Retry-After")); err == nil && s > 0 {
		return refusal{time.Duration(s) * time.Second}
	}
	return refusal{}
}

// close ends the session, as a host that is done does (not measured).
func (h *host) close(ctx context.Context) {
	if h.session == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.endpoint, nil)
	if err != nil {
		return
	}
	for k, v := range h.identity {
		req.Header[k] = v
	}
	req.Header.Set("Mcp-Session-Id", h.session)
	req.Header.Set("Mcp-Protocol-Version", h.protocol)
	if resp, err := h.client.Do(req); err == nil {
		resp.Body.Close()
	}
	h.session = ""
}
