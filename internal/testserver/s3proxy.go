package testserver

import (
	"context"
	"fmt"
	"html"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// S3Proxy is a reverse proxy in front of MinIO that holds back every
// response by a fixed delay, so a loopback MinIO costs what a remote S3
// would, and counts the requests it forwards by S3 operation: what the
// load benchmarks (cmd/bench-load, cmd/bench-mcp) report as storage
// requests.
type S3Proxy struct {
	URL string // http://127.0.0.1:PORT

	mu     sync.Mutex
	counts S3Counts
	refuse map[string]S3Refusal // by operation
	hook   func(op, key string) *S3Refusal
	cut    map[string]S3Cut // by operation
	srv    *http.Server
}

// OnRequest runs fn before each request is forwarded, with its operation
// and object key ("" for a bucket request), outside the proxy's lock: fn
// may count, block (holding a request while the test acts) or return the
// refusal to answer instead. nil removes it.
func (p *S3Proxy) OnRequest(fn func(op, key string) *S3Refusal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hook = fn
}

// S3Cut breaks off the body of a response after After bytes, its headers
// (Content-Length included) sent whole: the connection is closed (the
// client reads io.ErrUnexpectedEOF), or with Reset reset (ECONNRESET), as a
// store or a network failing mid-body does.
type S3Cut struct {
	After int64
	Reset bool
}

// Cut breaks off the body of every later response to operation op (as
// S3Operation names it) as c says; a zero c forwards them whole again.
func (p *S3Proxy) Cut(op string, c S3Cut) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c == (S3Cut{}) {
		delete(p.cut, op)
		return
	}
	p.cut[op] = c
}

// S3Refusal is the S3 error response the proxy answers an operation with
// instead of forwarding it (Refuse): what the server would send, e.g.
// MinIO's 507 XMinioStorageFull on a full drive.
type S3Refusal struct {
	Status int
	Code   string
}

// Refuse answers every later request of operation op (as S3Operation names
// it) with r, unforwarded and uncounted; a zero r forwards them again.
func (p *S3Proxy) Refuse(op string, r S3Refusal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r == (S3Refusal{}) {
		delete(p.refuse, op)
		return
	}
	p.refuse[op] = r
}

// S3Counts are requests by S3 operation (GetObject, ListObjectsV2, …).
type S3Counts map[string]int64

// Total is the number of requests of every operation.
func (c S3Counts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// Sub is c less before: the requests made since before was taken.
func (c S3Counts) Sub(before S3Counts) S3Counts {
	out := S3Counts{}
	for op, n := range c {
		if d := n - before[op]; d != 0 {
			out[op] = d
		}
	}
	return out
}

// StartS3Proxy listens on a free loopback port and forwards to target, an
// S3 endpoint addressed path-style. The Host header is passed through
// unchanged: clients sign their requests for the proxy's address, and MinIO
// checks the signature against the Host it receives.
func StartS3Proxy(target string, latency time.Duration) (*S3Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &S3Proxy{URL: "http://" + lis.Addr().String(), counts: S3Counts{}, refuse: map[string]S3Refusal{}, cut: map[string]S3Cut{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &delayTransport{
		// Enough idle connections for skillsvc's parallel reads and the
		// concurrent clients, so the numbers do not include reconnects.
		next:    &http.Transport{Proxy: nil, MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute},
		latency: latency,
	}
	// A client that gave up (a canceled call) is not worth a log line.
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			op := S3Operation(r)
			p.mu.Lock()
			hook := p.hook
			p.mu.Unlock()
			var hooked *S3Refusal
			if hook != nil {
				_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
				hooked = hook(op, key)
			}
			p.mu.Lock()
			refusal, refused := p.refuse[op]
			if hooked != nil {
				refusal, refused = *hooked, true
			}
			if !refused {
				p.counts[op]++
			}
			cut, cutting := p.cut[op]
			p.mu.Unlock()
			if refused {
				io.Copy(io.Discard, r.Body) // as a server reading the upload first
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(refusal.Status)
				fmt.Fprintf(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>%s</Code><Message>refused by the test proxy</Message><Resource>%s</Resource><RequestId>test</RequestId></Error>", refusal.Code, html.EscapeString(r.URL.Path))
				return
			}
			if cutting {
				w = &cutWriter{ResponseWriter: w, left: cut.After, reset: cut.Reset}
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go p.srv.Serve(lis)
	return p, nil
}

// Counts is a copy of the requests forwarded so far, by operation.
func (p *S3Proxy) Counts() S3Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// Requests is the number of requests forwarded so far.
func (p *S3Proxy) Requests() int64 { return p.Counts().Total() }

// Close stops the proxy, waiting up to 5s for requests in flight.
func (p *S3Proxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.srv.Shutdown(ctx)
}

// S3Operation names the S3 API operation of a path-style request
// (/bucket or /bucket/key), as S3 bills it: a ranged GET is a GetObject.
// The AWS SDK names most operations in its x-id parameter; others are told
// by method, level and subresource, and one it does not know is named by
// its method and level, e.g. "PATCH object".
func S3Operation(r *http.Request) string {
	q := r.URL.Query()
	if id := q.Get("x-id"); id != "" {
		return id
	}
	has := func(k string) bool { _, ok := q[k]; return ok }
	m := r.Method
	if _, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); key == "" {
		switch {
		case m == http.MethodGet && q.Get("list-type") == "2":
			return "ListObjectsV2"
		case m == http.MethodGet && has("location"):
			return "GetBucketLocation"
		case m == http.MethodGet && len(q) == 0:
			return "ListObjects"
		case m == http.MethodHead:
			return "HeadBucket"
		case m == http.MethodPut && len(q) == 0:
			return "CreateBucket"
		case m == http.MethodDelete && len(q) == 0:
			return "DeleteBucket"
		case m == http.MethodPost && has("delete"):
			return "DeleteObjects"
		}
		return m + " bucket"
	}
	switch {
	case m == http.MethodGet && has("uploadId"):
		return "ListParts"
	case m == http.MethodGet:
		return "GetObject"
	case m == http.MethodHead:
		return "HeadObject"
	case m == http.MethodPut && has("uploadId"):
		return "UploadPart"
	case m == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return "CopyObject"
	case m == http.MethodPut && len(q) == 0:
		return "PutObject"
	case m == http.MethodDelete && has("uploadId"):
		return "AbortMultipartUpload"
	case m == http.MethodDelete && len(q) == 0:
		return "DeleteObject"
	case m == http.MethodPost && has("uploads"):
		return "CreateMultipartUpload"
	case m == http.MethodPost && has("uploadId"):
		return "CompleteMultipartUpload"
	}
	return m + " object"
}

// delayTransport waits latency after the upstream answered, before the
// response headers go back: one round trip to a distant server.
type delayTransport struct {
	next    http.RoundTripper
	latency time.Duration
}

func (t *delayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || t.latency <= 0 {
		return resp, err
	}
	timer := time.NewTimer(t.latency)
	defer timer.Stop()
	select {
	case <-timer.C:
		return resp, nil
	case <-r.Context().Done():
		resp.Body.Close()
		return nil, r.Context().Err()
	}
}

// cutWriter passes a response on until left body bytes are written, then
// drops the rest (the server, short of the Content-Length it sent, closes
// the connection) or resets the connection.
type cutWriter struct {
	http.ResponseWriter
	left  int64
	reset bool
}

func (c *cutWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.left <= 0 {
		return len(b), nil
	}
	n := int(min(int64(len(b)), c.left))
	if _, err := c.ResponseWriter.Write(b[:n]); err != nil {
		return 0, err
	}
	c.left -= int64(n)
	if c.left == 0 && c.reset {
		rc := http.NewResponseController(c.ResponseWriter)
		_ = rc.Flush()
		if conn, _, err := rc.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close sends RST
			}
			conn.Close()
		}
		return n, http.ErrAbortHandler
	}
	return len(b), nil
}
