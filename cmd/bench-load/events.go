package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The events case: MinIO posts the tenants bucket's notifications to a
// relay the harness starts before MinIO (MinIO reads its notification
// targets at start, before any skillsvc listens), which forwards them to
// the skillsvc being measured, as internal/events/minio_test.go does.
const (
	eventsTarget = "benchload"
	eventsPath   = "/events/s3"
)

// eventRelay forwards MinIO's webhook posts to the current skillsvc's
// event endpoint; without one it answers 503 (MinIO drops the event).
type eventRelay struct {
	URL    string // MinIO's webhook endpoint
	token  string
	target atomic.Pointer[httputil.ReverseProxy]
	posts  atomic.Int64
	srv    *http.Server
}

func startEventRelay() (*eventRelay, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &eventRelay{URL: "http://" + lis.Addr().String() + eventsPath, token: rand.Text()}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if p := r.target.Load(); p != nil {
			r.posts.Add(1)
			p.ServeHTTP(w, req)
			return
		}
		http.Error(w, "no skillsvc with events", http.StatusServiceUnavailable)
	})}
	go r.srv.Serve(lis)
	return r, nil
}

// forward sends the posts to the skillsvc HTTP listener at addr; "" stops.
func (r *eventRelay) forward(addr string) {
	if addr == "" {
		r.target.Store(nil)
		return
	}
	r.target.Store(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr}))
}

func (r *eventRelay) Close() error { return r.srv.Close() }

// eventsFlags are the flags of a skillsvc that takes the bucket's events
// (its index-refresh and index-max-stale defaults then are events'), with
// the token written to a file in dir.
func (r *eventRelay) eventsFlags(dir string) ([]string, error) {
	f := filepath.Join(dir, "events-token")
	if err := os.WriteFile(f, []byte(r.token), 0o600); err != nil {
		return nil, err
	}
	return []string{"--http.listen=127.0.0.1:0", "--events.webhook-token-file=" + f, "--events.path=" + eventsPath}, nil
}

// probeEvents writes an object of no library to the tenants bucket and
// waits for MinIO's notification of it to reach the replica, so the events
// rows measure a replica that does receive the bucket's events.
func (b *bench) probeEvents(ctx context.Context) error {
	before := b.srv.relay.posts.Load()
	if _, err := b.direct.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(tenantBucket), Key: aws.String("bench-load/events-probe"), Body: strings.NewReader("probe"),
	}); err != nil {
		return fmt.Errorf("events probe: %w", err)
	}
	for deadline := time.Now().Add(probeWait); b.srv.relay.posts.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("MinIO's bucket notification did not reach skillsvc within %v", probeWait)
		}
	}
	return nil
}

// probeWait bounds how long a notification may take to arrive.
const probeWait = 10 * time.Second

// notifyRelay makes MinIO send bucket's object-created and -removed events
// to the relay's target, as an operator would with `mc event add`.
func notifyRelay(ctx context.Context, c *s3.Client, bucket string) error {
	_, err := c.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{
		Bucket: aws.String(bucket),
		NotificationConfiguration: &types.NotificationConfiguration{
			QueueConfigurations: []types.QueueConfiguration{{
				QueueArn: aws.String("arn:minio:sqs::" + eventsTarget + ":webhook"),
				Events:   []types.Event{"s3:ObjectCreated:*", "s3:ObjectRemoved:*"},
			}},
		},
	})
	if err != nil {
		return fmt.Errorf("bucket notification for %s: %w", bucket, err)
	}
	return nil
}
