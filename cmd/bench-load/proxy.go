package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

// latencyProxy is a reverse proxy in front of MinIO that holds back every
// response by a fixed delay, so a loopback MinIO costs what a remote S3
// would, and counts the requests it forwards.
type latencyProxy struct {
	URL      string // http://127.0.0.1:PORT
	requests atomic.Int64
	srv      *http.Server
}

// startLatencyProxy listens on a free loopback port and forwards to target.
// The Host header is passed through unchanged: clients sign their requests
// for the proxy's address, and MinIO checks the signature against the Host
// it receives.
func startLatencyProxy(target string, latency time.Duration) (*latencyProxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &latencyProxy{URL: "http://" + lis.Addr().String()}
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
			p.requests.Add(1)
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go p.srv.Serve(lis)
	return p, nil
}

// Requests is the number of requests forwarded so far.
func (p *latencyProxy) Requests() int64 { return p.requests.Load() }

func (p *latencyProxy) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.srv.Shutdown(ctx)
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
