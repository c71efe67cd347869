package testserver

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Every call through the proxy reaches MinIO, is counted under its S3
// operation and comes back no sooner than the added latency.
func TestS3Proxy(t *testing.T) {
	t.Parallel()
	m := SharedMinIO(t)
	bucket := m.NewBucket(t)
	const latency = 25 * time.Millisecond
	p, err := StartS3Proxy(m.Endpoint, latency)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c := s3.New(s3.Options{
		BaseEndpoint:               aws.String(p.URL),
		UsePathStyle:               true,
		Region:                     m.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	ctx := t.Context()
	b, key := aws.String(bucket), aws.String("lib/a/SKILL.md")
	get := func(rng *string) error {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: key, Range: rng})
		if err == nil {
			_, err = io.Copy(io.Discard, out.Body)
			out.Body.Close()
		}
		return err
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"put", func() error {
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: key, Body: bytes.NewReader([]byte("---\nname: a\n---\n"))})
			return err
		}},
		{"get", func() error { return get(nil) }},
		{"ranged get", func() error { return get(aws.String("bytes=0-3")) }},
		{"head", func() error { _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: key}); return err }},
		{"list", func() error {
			_, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String("lib/")})
			return err
		}},
		{"delete", func() error { _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: key}); return err }},
	}
	for _, tc := range calls {
		start := time.Now()
		if err := tc.call(); err != nil {
			t.Fatalf("%s through the proxy: %v", tc.name, err)
		}
		if d := time.Since(start); d < latency {
			t.Errorf("%s took %v, want at least the proxy's %v", tc.name, d, latency)
		}
	}
	want := S3Counts{"PutObject": 1, "GetObject": 2, "HeadObject": 1, "ListObjectsV2": 1, "DeleteObject": 1}
	got := p.Counts()
	if len(got) != len(want) || got.Total() != 6 || p.Requests() != 6 {
		t.Errorf("counts = %v (total %d), want %v", got, got.Total(), want)
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s = %d, want %d (all: %v)", op, got[op], n, got)
		}
	}
	if since := got.Sub(S3Counts{"GetObject": 2, "PutObject": 1}); since.Total() != 3 || since["GetObject"] != 0 || since["HeadObject"] != 1 {
		t.Errorf("Sub = %v, want HeadObject, ListObjectsV2 and DeleteObject once each", since)
	}
}

// Requests from clients that do not send the AWS SDK's x-id are told apart
// by method, level and subresource.
func TestS3Operation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		method, target string
		header         string
		want           string
	}{
		{http.MethodGet, "/b/k?x-id=GetObject", "", "GetObject"},
		{http.MethodGet, "/b/dir/k.md", "", "GetObject"},
		{http.MethodGet, "/b?list-type=2&prefix=a%2F", "", "ListObjectsV2"},
		{http.MethodGet, "/b/?list-type=2", "", "ListObjectsV2"},
		{http.MethodGet, "/b", "", "ListObjects"},
		{http.MethodGet, "/b?location", "", "GetBucketLocation"},
		{http.MethodGet, "/b/k?uploadId=1", "", "ListParts"},
		{http.MethodHead, "/b", "", "HeadBucket"},
		{http.MethodHead, "/b/k", "", "HeadObject"},
		{http.MethodPut, "/b", "", "CreateBucket"},
		{http.MethodPut, "/b/k", "", "PutObject"},
		{http.MethodPut, "/b/k", "/b/other", "CopyObject"},
		{http.MethodPut, "/b/k?partNumber=1&uploadId=1", "", "UploadPart"},
		{http.MethodDelete, "/b/k", "", "DeleteObject"},
		{http.MethodDelete, "/b/k?uploadId=1", "", "AbortMultipartUpload"},
		{http.MethodDelete, "/b", "", "DeleteBucket"},
		{http.MethodPost, "/b?delete", "", "DeleteObjects"},
		{http.MethodPost, "/b/k?uploads", "", "CreateMultipartUpload"},
		{http.MethodPost, "/b/k?uploadId=1", "", "CompleteMultipartUpload"},
		{http.MethodPatch, "/b/k", "", "PATCH object"},
		{http.MethodPut, "/b?versioning", "", "PUT bucket"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.target, strings.NewReader(""))
			if tt.header != "" {
				r.Header.Set("X-Amz-Copy-Source", tt.header)
			}
			if got := S3Operation(r); got != tt.want {
				t.Errorf("S3Operation = %q, want %q", got, tt.want)
			}
		})
	}
}
