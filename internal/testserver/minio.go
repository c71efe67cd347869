package testserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const (
	minioAccessKey = "skillsvc"
	minioSecretKey = "skillsvc-secret-key"
	minioRegion    = "us-east-1"
	minioBinEnv    = "SKILLSVC_MINIO_BIN"

	minioReadyTimeout = 60 * time.Second
	pollInterval      = 50 * time.Millisecond
)

// MinIO is a running MinIO server.
type MinIO struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string

	srv restartable
}

// StartMinIO starts a MinIO server for this test; t.Cleanup stops it and
// removes its data. env adds MinIO settings (KEY=VALUE) to its environment,
// such as a notification target (WebhookEnv); other MINIO_ variables of the
// test's environment never reach it.
func StartMinIO(t testing.TB, env ...string) *MinIO {
	t.Helper()
	Integration(t, "MinIO")
	m, _, err := startMinIOWithEnv(env)
	if err != nil {
		unavailable(t, "MinIO", minioBinEnv, err)
	}
	t.Cleanup(m.srv.stop)
	return m
}

// Stop kills a server from StartMinIO as an outage would, keeping its data
// and address for Restart.
func (m *MinIO) Stop(t testing.TB) {
	t.Helper()
	m.srv.kill()
}

// Restart brings a stopped server back on the same address with the same
// data, and waits until it is ready.
func (m *MinIO) Restart(t testing.TB) {
	t.Helper()
	m.srv.restart(t, "MinIO", func(p *process) error { return waitMinIOReady(p, m.Endpoint, portOf(m.Endpoint)) })
}

// SharedMinIO returns the test binary's shared MinIO server, starting it on
// first use. Give each test its own bucket with NewBucket. TestMain must call
// Shutdown to stop it.
func SharedMinIO(t testing.TB) *MinIO {
	t.Helper()
	return sharedMinIO.get(t)
}

func startMinIO() (*MinIO, *process, error) { return startMinIOWithEnv(nil) }

func startMinIOWithEnv(extraEnv []string) (*MinIO, *process, error) {
	bin, err := findBinary(minioBinEnv, inRepoTools("minio"), onPath("minio"))
	if err != nil {
		return nil, nil, fmt.Errorf("finding minio: %w", err)
	}
	for attempt := 1; ; attempt++ {
		m, p, err := startMinIOOnce(bin, extraEnv)
		if err == nil {
			return m, p, nil
		}
		if !errors.Is(err, errPortRace) || attempt == startAttempts {
			return nil, nil, err
		}
	}
}

// errPortRace marks a start that failed because another process took the
// port first; the caller retries on a new port.
var errPortRace = errors.New("port taken by another process")

func startMinIOOnce(bin string, extraEnv []string) (*MinIO, *process, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	dir, err := os.MkdirTemp("", "skillsvc-minio-")
	if err != nil {
		return nil, nil, err
	}
	if err := checkDiskSpace(dir); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	args := []string{
		"server", filepath.Join(dir, "data"),
		"--address", addr,
		"--console-address", "127.0.0.1:" + strconv.Itoa(ports[1]),
		// Otherwise MinIO creates ~/.minio/certs.
		"--certs-dir", filepath.Join(dir, "certs"),
		"--quiet",
	}
	env := serverEnv("MINIO_",
		"MINIO_ROOT_USER="+minioAccessKey,
		"MINIO_ROOT_PASSWORD="+minioSecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	env = append(env, extraEnv...)
	p, err := startProcess("minio", dir, bin, args, env)
	if err != nil {
		return nil, nil, err
	}
	m := &MinIO{
		Endpoint:  "http://" + addr,
		AccessKey: minioAccessKey,
		SecretKey: minioSecretKey,
		Region:    minioRegion,
		srv:       restartable{proc: p},
	}
	if err := waitMinIOReady(p, m.Endpoint, ports[0]); err != nil {
		p.stop()
		return nil, nil, err
	}
	return m, p, nil
}

// waitMinIOReady polls the liveness and then the readiness endpoint; both
// are unauthenticated, so the probe does not depend on the S3 client.
func waitMinIOReady(p *process, endpoint string, port int) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(minioReadyTimeout)
	for _, path := range []string{"/minio/health/live", "/minio/health/ready"} {
		for {
			if p.exited() {
				if isPortRace(p.out.Tail(30)) {
					return fmt.Errorf("%w: %s", errPortRace, p.exitReport())
				}
				return errors.New(p.exitReport())
			}
			resp, err := client.Get(endpoint + path)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("minio at %s not ready after %v (last probe of %s: %v); last output:\n%s",
					endpoint, minioReadyTimeout, path, probeResult(resp, err), p.out.Tail(30))
			}
			time.Sleep(pollInterval)
		}
	}
	// The probes may have reached another MinIO (say, another package's
	// test binary) that won the port while ours was still starting up.
	if ours, err := listensOn(p.cmd.Process.Pid, port); err != nil {
		return fmt.Errorf("checking that minio owns port %d: %w", port, err)
	} else if !ours {
		return fmt.Errorf("%w: another server answered on port %d", errPortRace, port)
	}
	return nil
}

func probeResult(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// Client returns an S3 client for the server. It is built from explicit
// options rather than config.LoadDefaultConfig, so a developer's AWS
// environment and ~/.aws files cannot change what the tests talk to.
// Checksums are computed and validated only when S3 requires them: MinIO
// sends no full-object checksum on ranged GETs, and the default setting logs
// a warning for each.
func (m *MinIO) Client(t testing.TB) *s3.Client {
	t.Helper()
	return m.S3()
}

// S3 is Client for code outside tests.
func (m *MinIO) S3() *s3.Client {
	region := m.Region
	if region == "" {
		region = minioRegion
	}
	return s3.New(s3.Options{
		BaseEndpoint:               aws.String(m.Endpoint),
		UsePathStyle:               true,
		Region:                     region,
		Credentials:                credentials.NewStaticCredentialsProvider(m.AccessKey, m.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// NewBucket creates a bucket with a fresh random name and returns the name.
// It refuses to use a bucket that already exists, so a test can never empty
// someone else's data; t.Cleanup empties and deletes the bucket.
func (m *MinIO) NewBucket(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testserver: random bucket name: %v", err)
	}
	name := "test-" + hex.EncodeToString(b[:])
	// A MinIO on a busy machine answers a test's setup 503 now and then,
	// ready or not: the setup tries for a few seconds, not three times.
	client := s3.New(m.Client(t).Options(), func(o *s3.Options) {
		o.Retryer = retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.MaxBackoff, o.RateLimiter = 10, 2*time.Second, ratelimit.None
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// CreateBucket alone is not enough: S3 in us-east-1 answers success
	// when the caller already owns the bucket.
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
	var notFound *types.NotFound
	switch {
	case err == nil:
		t.Fatalf("testserver: bucket %q already exists at %s; refusing to use it", name, m.Endpoint)
	case !errors.As(err, &notFound):
		t.Fatalf("testserver: checking bucket %q at %s: %v", name, m.Endpoint, err)
	}
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("testserver: creating bucket %q at %s: %v", name, m.Endpoint, err)
	}

	t.Cleanup(func() {
		// Not t.Context(): it is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// NoSuchBucket: the test deleted the bucket itself. BucketNotEmpty:
		// a write a killed skillsvc had already sent (a background index
		// write) landed after the listing; empty the bucket again.
		err := deleteBucket(ctx, client, name)
		for try := 1; try < 5 && isBucketNotEmpty(err); try++ {
			time.Sleep(time.Duration(try) * 200 * time.Millisecond)
			err = deleteBucket(ctx, client, name)
		}
		if err != nil && !isNoSuchBucket(err) && m.running() {
			t.Errorf("testserver: deleting bucket %q: %v", name, err)
		}
	})
	return name
}

// running reports whether the server may still be up. Cleanup errors are
// only worth reporting then; for a MinIO built by hand we cannot tell, so
// assume it is.
func (m *MinIO) running() bool { return m.srv.running() }

// PID is the MinIO process's ID (0 when not running): a benchmark watches
// its CPU to start measuring once MinIO's own work after an upload ends.
func (m *MinIO) PID() int { return m.srv.pid() }

// deleteBucket empties the bucket, including old versions, delete markers
// and unfinished multipart uploads, then deletes it.
func deleteBucket(ctx context.Context, client *s3.Client, bucket string) error {
	uploads := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	for uploads.HasMorePages() {
		page, err := uploads.NextPage(ctx)
		if isNotImplemented(err) {
			break // a store without multipart listing (s3rver) has none to abort
		}
		if err != nil {
			return fmt.Errorf("list multipart uploads: %w", err)
		}
		for _, u := range page.Uploads {
			_, err := client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(bucket), Key: u.Key, UploadId: u.UploadId,
			})
			if err != nil {
				return fmt.Errorf("abort multipart upload of %q: %w", aws.ToString(u.Key), err)
			}
		}
	}

	versions := s3.NewListObjectVersionsPaginator(client, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for versions.HasMorePages() {
		page, err := versions.NextPage(ctx)
		if isNotImplemented(err) {
			// A store without versions (s3rver): its objects are all.
			return deleteCurrent(ctx, client, bucket)
		}
		if err != nil {
			return fmt.Errorf("list object versions: %w", err)
		}
		var ids []types.ObjectIdentifier
		for _, v := range page.Versions {
			ids = append(ids, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, d := range page.DeleteMarkers {
			ids = append(ids, types.ObjectIdentifier{Key: d.Key, VersionId: d.VersionId})
		}
		if err := deleteObjects(ctx, client, bucket, ids); err != nil {
			return err
		}
	}

	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}

func isBucketNotEmpty(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "BucketNotEmpty"
}

// deleteCurrent deletes every object of an unversioned bucket, then the
// bucket.
func deleteCurrent(ctx context.Context, client *s3.Client, bucket string) error {
	objects := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for objects.HasMorePages() {
		page, err := objects.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list objects: %w", err)
		}
		var ids []types.ObjectIdentifier
		for _, o := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: o.Key})
		}
		if err := deleteObjects(ctx, client, bucket, ids); err != nil {
			return err
		}
	}
	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)})
	return err
}

func isNotImplemented(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NotImplemented" || apiErr.ErrorCode() == "MethodNotAllowed")
}

func isNoSuchBucket(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "NoSuchBucket"
}

// deleteObjects deletes ids in batches of the 1000 keys S3 accepts per call.
func deleteObjects(ctx context.Context, client *s3.Client, bucket string, ids []types.ObjectIdentifier) error {
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids[:n], Quiet: aws.Bool(true)},
		})
		if err != nil {
			return fmt.Errorf("delete objects: %w", err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("delete %q: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
		ids = ids[n:]
	}
	return nil
}

// SetBucketQuota gives bucket a hard quota of size bytes through MinIO's
// admin API (what `mc quota set --size` does), so a test can make the store
// refuse writes for want of space: a PUT of size bytes or more is refused at
// once with XMinioAdminBucketQuotaExceeded.
func (m *MinIO) SetBucketQuota(t testing.TB, bucket string, size int64) {
	t.Helper()
	body := fmt.Appendf(nil, `{"size":%d,"quotatype":"hard"}`, size)
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut,
		m.Endpoint+"/minio/admin/v3/set-bucket-quota?bucket="+url.QueryEscape(bucket), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// MinIO checks the signed payload hash against this header.
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	creds := aws.Credentials{AccessKeyID: m.AccessKey, SecretAccessKey: m.SecretKey}
	if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, payloadHash, "s3", m.Region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("set bucket quota: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("set bucket quota: %s: %s", resp.Status, msg)
	}
}
