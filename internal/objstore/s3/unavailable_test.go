package s3_test

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
)

// TestUnavailable: a store that does not answer, or answers with a server
// error, is ErrUnavailable (clients retry it), while a 404 stays NotFound.
func TestUnavailable(t *testing.T) {
	offlineCredentials(t)
	t.Setenv("AWS_MAX_ATTEMPTS", "1") // the SDK's own retries only slow the test

	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()

	status := func(code int) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tc := range []struct {
		name     string
		endpoint string
		want     error
	}{
		{"connection refused", refused, objstore.ErrUnavailable},
		{"503", status(http.StatusServiceUnavailable), objstore.ErrUnavailable},
		{"500", status(http.StatusInternalServerError), objstore.ErrUnavailable},
		{"404", status(http.StatusNotFound), objstore.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := s3.New(t.Context(), s3.Config{Bucket: "b", Endpoint: tc.endpoint, Region: "us-east-1", PathStyle: true, MaxConnsPerHost: 4})
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.Stat(t.Context(), "k")
			if !errors.Is(err, tc.want) {
				t.Errorf("Stat err = %v, want %v", err, tc.want)
			}
			if tc.want != objstore.ErrUnavailable {
				return
			}
			if errkind.Of(err) != errkind.Unavailable {
				t.Errorf("kind = %v, want Unavailable", errkind.Of(err))
			}
			if _, err := b.Put(t.Context(), "k", bytes.NewReader([]byte("x")), 1, objstore.PutOptions{}); !errors.Is(err, objstore.ErrUnavailable) {
				t.Errorf("Put err = %v, want ErrUnavailable", err)
			}
			if _, err := b.List(t.Context(), objstore.ListOptions{Prefix: "p/"}); !errors.Is(err, objstore.ErrUnavailable) {
				t.Errorf("List err = %v, want ErrUnavailable", err)
			}
			if err := b.Check(t.Context()); !errors.Is(err, objstore.ErrUnavailable) {
				t.Errorf("Check err = %v, want ErrUnavailable", err)
			}
		})
	}
}

// offlineCredentials gives the SDK static credentials and no profile, for
// tests against a fake S3 endpoint.
func offlineCredentials(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
}
