package testserver

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// IgnoringConditions is m seen through a proxy that drops the If-Match and
// If-None-Match headers of every request and signs it again with m's
// credentials: a store that answers every conditional write 200 (as s3rver
// and Garage do), for the write-safety probe to refuse. t.Cleanup stops the
// proxy. The result's Endpoint is the proxy; everything else is m's.
func (m *MinIO) IgnoringConditions(t testing.TB) *MinIO {
	t.Helper()
	u, err := url.Parse(m.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	region := m.Region
	if region == "" {
		region = minioRegion
	}
	creds := aws.Credentials{AccessKeyID: m.AccessKey, SecretAccessKey: m.SecretKey}
	signer := v4.NewSigner()
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) }
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "" {
				r.Header.Del("If-Match")
				r.Header.Del("If-None-Match")
				// The headers were signed: sign what is left, for the
				// Host the client addressed (passed through unchanged).
				r.Header.Del("Authorization")
				r.URL.Scheme, r.URL.Host = "http", r.Host
				if err := signer.SignHTTP(r.Context(), creds, r, r.Header.Get("X-Amz-Content-Sha256"), "s3", region, time.Now()); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			rp.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(lis)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return &MinIO{Endpoint: "http://" + lis.Addr().String(), AccessKey: m.AccessKey, SecretKey: m.SecretKey, Region: m.Region}
}
