// Package embed is a client of an OpenAI-compatible embeddings endpoint
// (POST <url>/v1/embeddings): the optional semantic stage of skill search.
// Every request and response is bounded, so a misbehaving endpoint costs a
// replica a known amount of memory and time, and every failure carries an
// errkind so the catalog can fall back to lexical ranking.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/options"
)

// Limits of one client.
const (
	// MaxBatch is the most inputs one request carries.
	MaxBatch = 64
	// MaxBatchBytes is the most input text one request carries.
	MaxBatchBytes = 256 << 10
	// MaxInputBytes is the longest input: the caller bounds what it
	// embeds (a skill's head and the start of its body, a task).
	MaxInputBytes = 32 << 10
	// MaxDims is the longest vector accepted.
	MaxDims = 4096
	// maxResponseBytes bounds a response: MaxBatch vectors of MaxDims
	// numbers of about 24 characters of JSON each, with room.
	maxResponseBytes = MaxBatch*MaxDims*24 + 1<<20
	// attempts is how often a request is tried on 429, 5xx or a network
	// failure.
	attempts = 3
)

// Errors, by what the caller can do about them.
var (
	// ErrUnavailable: the endpoint cannot be reached, is overloaded or
	// failed (network, 429, 5xx, after the retries).
	ErrUnavailable = errkind.NewInternal(errkind.Unavailable, "embeddings: endpoint unavailable")
	// ErrRejected: the endpoint refused the request (4xx other than 429:
	// a wrong model, key or URL).
	ErrRejected = errkind.NewInternal(errkind.FailedPrecondition, "embeddings: request rejected")
	// ErrBadResponse: the endpoint answered something that is not the
	// embeddings of the inputs (malformed, too large, missing or
	// inconsistent vectors).
	ErrBadResponse = errkind.NewInternal(errkind.Unavailable, "embeddings: bad response")
	// ErrInputTooLarge: an input is longer than MaxInputBytes.
	ErrInputTooLarge = errkind.New(errkind.InvalidArgument, "embeddings: input too large")
	// ErrConfig: the configuration is unusable.
	ErrConfig = errkind.New(errkind.InvalidArgument, "embeddings: bad configuration")
)

// Config configures the embeddings endpoint. An empty URL turns the
// semantic stage off: no request is made and nothing is held.
type Config struct {
	// URL is the endpoint's base: requests go to URL + "/v1/embeddings".
	URL string
	// Model is sent as the request's model, and names the vectors cached.
	Model string
	// APIKeyFile holds a bearer token sent with each request; empty sends
	// none.
	APIKeyFile string
	// Timeout bounds one request (each retry has its own).
	Timeout time.Duration
	// Weight is the share of the semantic score in a hybrid ranking
	// (0..1; the lexical relevance has the rest).
	Weight float64
}

// DefaultWeight is the semantic share of the hybrid ranking, chosen on
// the selection benchmark's tune requests (docs/selection.md).
const DefaultWeight = 0.2

// RegisterFlagsWithPrefix registers the flags, e.g. with prefix
// "search.embeddings.".
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.URL, prefix+"url", "", "Base URL of an OpenAI-compatible embeddings endpoint (POST <url>/v1/embeddings) for the optional semantic stage of skill search; empty: lexical search only, no request made.")
	f.StringVar(&c.Model, prefix+"model", "", "Embedding model to ask the endpoint for (required with the URL); the cached vectors are named by it.")
	f.StringVar(&c.APIKeyFile, prefix+"api-key-file", "", "File holding a bearer token for the embeddings endpoint; empty sends none.")
	f.DurationVar(&c.Timeout, prefix+"timeout", 10*time.Second, "Bound of one embeddings request (each of up to 3 tries on 429, 5xx or a network failure).")
	f.Float64Var(&c.Weight, prefix+"weight", DefaultWeight, "Share of the semantic similarity in the hybrid relevance (0..1); the lexical relevance has the rest.")
	// Experimental: the optional semantic stage, its weight tuned on one
	// small model (docs/selection.md), may change in a minor release.
	options.Tag(f, options.Experimental, prefix+"url", prefix+"model", prefix+"api-key-file", prefix+"timeout", prefix+"weight")
}

// Enabled reports whether the semantic stage is on.
func (c Config) Enabled() bool { return c.URL != "" }

// Validate checks an enabled configuration.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
		return fmt.Errorf("%w: url %q is not http(s)", ErrConfig, c.URL)
	}
	if c.Model == "" {
		return fmt.Errorf("%w: a model is required with the url", ErrConfig)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("%w: timeout must be positive", ErrConfig)
	}
	if !(c.Weight >= 0 && c.Weight <= 1) {
		return fmt.Errorf("%w: weight %v is not within 0..1", ErrConfig, c.Weight)
	}
	return nil
}

// Client embeds texts through the endpoint. It is safe for concurrent use.
type Client struct {
	url, model, key string
	timeout         time.Duration
	hc              *http.Client
	backoff         time.Duration // before the first retry; doubled, jittered
}

// New returns a client of an enabled, valid cfg; the API key file is read
// once here.
func New(cfg Config) (*Client, error) {
	if !cfg.Enabled() {
		return nil, fmt.Errorf("%w: no url", ErrConfig)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{
		url: strings.TrimRight(cfg.URL, "/") + "/v1/embeddings", model: cfg.Model, timeout: cfg.Timeout,
		hc: &http.Client{}, backoff: 200 * time.Millisecond,
	}
	if cfg.APIKeyFile != "" {
		b, err := os.ReadFile(cfg.APIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: api key file: %v", ErrConfig, err)
		}
		c.key = strings.TrimSpace(string(b))
	}
	return c, nil
}

// Model is the model asked for.
func (c *Client) Model() string { return c.model }

// Embed returns the embedding of each input, in order, in as few requests
// as MaxBatch and MaxBatchBytes allow. Every vector has the same length.
func (c *Client) Embed(ctx context.Context, inputs []string) ([][]float32, error) {
	out := make([][]float32, 0, len(inputs))
	for start := 0; start < len(inputs); {
		end, size := start, 0
		for end < len(inputs) && end-start < MaxBatch {
			n := len(inputs[end])
			if n > MaxInputBytes {
				return nil, fmt.Errorf("%w: input %d has %d bytes, over %d", ErrInputTooLarge, end, n, MaxInputBytes)
			}
			if end > start && size+n > MaxBatchBytes {
				break
			}
			size += n
			end++
		}
		vs, err := c.batch(ctx, inputs[start:end])
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs[0]) != len(out[0]) {
			return nil, fmt.Errorf("%w: vectors of %d and %d dimensions", ErrBadResponse, len(out[0]), len(vs[0]))
		}
		out = append(out, vs...)
		start = end
	}
	return out, nil
}

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// batch embeds one request's inputs, retrying what may pass later.
func (c *Client) batch(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.model, Input: inputs})
	if err != nil {
		return nil, err
	}
	wait := c.backoff
	for try := 1; ; try++ {
		vs, retryAfter, err := c.post(ctx, body, len(inputs))
		if err == nil || !errors.Is(err, ErrUnavailable) || try == attempts || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return vs, err
		}
		d := wait/2 + rand.N(wait/2+1)
		if retryAfter > d {
			d = min(retryAfter, c.timeout)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// post makes one request: the vectors, or an error and how long the
// endpoint asked to wait.
func (c *Client) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading the response: %v", ErrUnavailable, err)
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		var after time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return nil, after, fmt.Errorf("%w: status %d", ErrUnavailable, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return nil, 0, fmt.Errorf("%w: %s", ErrRejected, rejection(resp.StatusCode, data, body))
	}
	vs, err := decode(data, n)
	return vs, 0, err
}

// decode reads a response to n inputs: n vectors, each placed by its
// index, of one length within MaxDims, every number finite.
func decode(data []byte, n int) ([][]float32, error) {
	if len(data) > maxResponseBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrBadResponse, maxResponseBytes)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d vectors for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		switch {
		case d.Index < 0 || d.Index >= n || out[d.Index] != nil:
			return nil, fmt.Errorf("%w: index %d", ErrBadResponse, d.Index)
		case len(d.Embedding) == 0 || len(d.Embedding) > MaxDims:
			return nil, fmt.Errorf("%w: a vector of %d dimensions", ErrBadResponse, len(d.Embedding))
		case len(d.Embedding) != len(r.Data[0].Embedding):
			return nil, fmt.Errorf("%w: vectors of %d and %d dimensions", ErrBadResponse, len(r.Data[0].Embedding), len(d.Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: a number that is not finite", ErrBadResponse)
			}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// rejection says why the endpoint refused a request without repeating its
// words: endpoints echo their inputs in error messages, and a search's
// task is a user's private query, which the log must not keep. So only the
// status, the body's length and an error's "type" and "code" (OpenAI's
// {"error": {...}}, or at the top level) are told, and those only when
// they are short identifiers found nowhere in the request.
func rejection(status int, data, request []byte) string {
	var r struct {
		errorFields
		Error json.RawMessage `json:"error"`
	}
	var fields []string
	if json.Unmarshal(data, &r) == nil {
		var nested errorFields
		if json.Unmarshal(r.Error, &nested) == nil {
			r.errorFields = nested
		}
		for _, f := range []struct {
			name  string
			value json.RawMessage
		}{{"type", r.Type}, {"code", r.Code}} {
			if v, ok := identifier(f.value, request); ok {
				fields = append(fields, f.name+" "+v)
			}
		}
	}
	fields = append(fields, strconv.Itoa(len(data))+" bytes of body")
	return fmt.Sprintf("status %d (%s)", status, strings.Join(fields, ", "))
}

// errorFields are the parts of an error body told in the log.
type errorFields struct {
	Type json.RawMessage `json:"type"`
	Code json.RawMessage `json:"code"`
}

// identifier is raw as a string or number of at most 64 letters, digits,
// '_', '-' and '.', if the request does not contain it (case folded).
func identifier(raw json.RawMessage, request []byte) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return "", false
	}
	if s == "" || len(s) > 64 || strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) >= 0 {
		return "", false
	}
	if bytes.Contains(bytes.ToLower(request), []byte(strings.ToLower(s))) {
		return "", false
	}
	return s, true
}
