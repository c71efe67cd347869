package testserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Shutdown()
	os.Exit(code)
}

func TestStartMinIO(t *testing.T) {
	t.Parallel()
	m := StartMinIO(t)
	client := m.Client(t)
	ctx := t.Context()

	var bucket string
	t.Run("bucket", func(t *testing.T) {
		bucket = m.NewBucket(t)
		if !strings.HasPrefix(bucket, "test-") || strings.ToLower(bucket) != bucket {
			t.Errorf("bucket name %q: want lowercase with prefix test-", bucket)
		}
		putGet(t, client, bucket)
	})

	// The subtest's cleanup must have emptied and deleted its bucket.
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	var notFound *types.NotFound
	if !errors.As(err, &notFound) {
		t.Errorf("HeadBucket(%q) after cleanup: got %v, want NotFound", bucket, err)
	}
}

func TestSharedMinIO(t *testing.T) {
	t.Parallel()
	m := SharedMinIO(t)
	if again := SharedMinIO(t); again != m {
		t.Fatalf("SharedMinIO started a second server: %s and %s", m.Endpoint, again.Endpoint)
	}
	a, b := m.NewBucket(t), m.NewBucket(t)
	if a == b {
		t.Fatalf("NewBucket returned %q twice", a)
	}
	putGet(t, m.Client(t), a)
}

// putGet writes objects and reads one back whole and by range.
func putGet(t *testing.T, client *s3.Client, bucket string) {
	t.Helper()
	ctx := t.Context()
	body := []byte("hello, skillsvc")
	for _, key := range []string{"dir/a.txt", "dir/b.txt", "c.txt"} {
		_, err := client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body),
		})
		if err != nil {
			t.Fatalf("PutObject(%s): %v", key, err)
		}
	}
	tests := []struct {
		name  string
		rng   *string
		wantB string
	}{
		{name: "whole", wantB: string(body)},
		{name: "range", rng: aws.String("bytes=7-14"), wantB: "skillsvc"},
	}
	for _, tt := range tests {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{
			Bucket: aws.String(bucket), Key: aws.String("dir/a.txt"), Range: tt.rng,
		})
		if err != nil {
			t.Fatalf("%s: GetObject: %v", tt.name, err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading body: %v", tt.name, err)
		}
		if string(got) != tt.wantB {
			t.Errorf("%s: GetObject body = %q, want %q", tt.name, got, tt.wantB)
		}
	}
}

func TestStartRedis(t *testing.T) {
	t.Parallel()
	var addr string
	t.Run("set get", func(t *testing.T) {
		r := StartRedis(t)
		addr = r.Addr
		if strings.HasSuffix(addr, ":6379") {
			t.Errorf("test server on the default Redis port: %s", addr)
		}
		setGet(t, r)
	})
	if addr == "" {
		t.Skip("the subtest skipped: no redis-server")
	}
	// The subtest's cleanup must have stopped the server.
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("redis-server at %s still accepts connections after cleanup", addr)
	}
}

func TestSharedRedis(t *testing.T) {
	t.Parallel()
	r := SharedRedis(t)
	if again := SharedRedis(t); again != r {
		t.Fatalf("SharedRedis started a second server: %s and %s", r.Addr, again.Addr)
	}
	setGet(t, r)
}

func setGet(t *testing.T, r *Redis) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: r.Addr, Protocol: 2})
	t.Cleanup(func() { client.Close() })
	ctx := t.Context()
	key := t.Name() + ":greeting"
	if err := client.Set(ctx, key, "hello", time.Minute).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := client.Get(ctx, key).Result()
	if err != nil || got != "hello" {
		t.Fatalf("GET = %q, %v; want %q", got, err, "hello")
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		lines  int
		want   string
	}{
		{name: "fits", max: 100, writes: []string{"a\n", "b\n"}, lines: 10, want: "a\nb"},
		{name: "last lines", max: 100, writes: []string{"a\nb\nc\n"}, lines: 2, want: "b\nc"},
		{name: "bounded", max: 4, writes: []string{"abc\n", "def\n"}, lines: 10, want: "def"},
		{name: "empty", max: 4, lines: 10, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{max: tt.max}
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			if len(b.buf) > tt.max {
				t.Errorf("buffer holds %d bytes, max %d", len(b.buf), tt.max)
			}
			if got := b.Tail(tt.lines); got != tt.want {
				t.Errorf("Tail(%d) = %q, want %q", tt.lines, got, tt.want)
			}
		})
	}
}

func TestListensOn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listensOn reads /proc")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	free, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		pid  int
		port int
		want bool
	}{
		{name: "own listener", pid: os.Getpid(), port: port, want: true},
		{name: "closed port", pid: os.Getpid(), port: free[0], want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := listensOn(tt.pid, tt.port)
			if err != nil || got != tt.want {
				t.Errorf("listensOn(%d, %d) = %v, %v; want %v", tt.pid, tt.port, got, err, tt.want)
			}
		})
	}
}
