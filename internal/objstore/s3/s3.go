// Package s3 implements objstore.Bucket on AWS S3 and S3-compatible servers
// (MinIO, …) with aws-sdk-go-v2.
package s3

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/skillsvc/skillsvc/internal/filemode"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/options"
)

// Config selects the bucket and how to reach it. Credentials come from the
// standard AWS chain (env, shared config, web identity, instance role).
type Config struct {
	Bucket    string
	Endpoint  string
	Region    string
	PathStyle bool
	// MaxConnsPerHost sizes the idle pool: listings fan out to many GETs,
	// and the SDK default of 10 idle connections per host would churn.
	MaxConnsPerHost int
	// ReadOnlyIfUnsafe serves a store that fails the write-safety probe
	// (objstore.CheckWriteSafety) read-only instead of refusing to start.
	ReadOnlyIfUnsafe bool
}

// RegisterFlagsWithPrefix registers the config's flags with defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.Bucket, prefix+"bucket", "", "S3 bucket name.")
	f.StringVar(&c.Endpoint, prefix+"endpoint", "", "S3 endpoint URL for S3-compatible servers, e.g. http://127.0.0.1:9000 for MinIO. Empty uses the AWS SDK's AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or shared config endpoint_url if set, else AWS.")
	f.StringVar(&c.Region, prefix+"region", "us-east-1", "S3 region.")
	f.BoolVar(&c.PathStyle, prefix+"path-style", false, "Use path-style addressing (needed for MinIO and most S3-compatible servers).")
	f.IntVar(&c.MaxConnsPerHost, prefix+"max-conns-per-host", 256, "Idle HTTP connections kept per S3 host.")
	f.BoolVar(&c.ReadOnlyIfUnsafe, prefix+"read-only-if-unsafe", false, "Serve a store that ignores conditional writes (If-None-Match, If-Match, concurrent creates: checked at start and by every readiness check) read-only, every write refused FAILED_PRECONDITION, instead of refusing to start: writing to it would lose updates silently.")
	options.Tag(f, options.Basic, prefix+"bucket", prefix+"endpoint", prefix+"region", prefix+"path-style")
}

// ErrNoBucket is returned by Validate when no bucket is configured.
var ErrNoBucket = errors.New("s3: bucket is required")

// Validate checks the config.
func (c *Config) Validate() error {
	if c.Bucket == "" {
		return ErrNoBucket
	}
	if c.MaxConnsPerHost <= 0 {
		return fmt.Errorf("s3: max-conns-per-host must be positive, got %d", c.MaxConnsPerHost)
	}
	return nil
}

// Bucket is an S3-backed objstore.Bucket.
type Bucket struct {
	client *awss3.Client
	bucket string
}

var _ objstore.Bucket = (*Bucket)(nil)

// New builds a client from cfg.
func New(ctx context.Context, cfg Config) (*Bucket, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client, err := cfg.client(ctx)
	if err != nil {
		return nil, err
	}
	return NewWithClient(client, cfg.Bucket), nil
}

// client is the S3 client cfg names: the SDK's configuration chain
// (environment, shared config file) with the flags on top. StoreEndpoint
// asks the same client where it goes.
func (c Config) client(ctx context.Context) (*awss3.Client, error) {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = c.MaxConnsPerHost
		tr.MaxIdleConnsPerHost = c.MaxConnsPerHost
		tr.IdleConnTimeout = 90 * time.Second
	})
	awsCfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(c.Region),
		config.WithHTTPClient(httpClient),
		// MinIO does not return checksums for ranged GETs; validating them
		// only when required avoids a warning per read.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	)
	if err != nil {
		return nil, fmt.Errorf("s3: load AWS config: %w", err)
	}
	return awss3.NewFromConfig(awsCfg, func(o *awss3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
	}), nil
}

// NewWithClient wraps an existing client.
func NewWithClient(client *awss3.Client, bucket string) *Bucket {
	return &Bucket{client: client, bucket: bucket}
}

// Check verifies that the bucket exists and is reachable.
func (b *Bucket) Check(ctx context.Context) error {
	_, err := b.client.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: &b.bucket})
	if err != nil {
		return fmt.Errorf("s3: bucket %q: %w", b.bucket, mapErr("head bucket", "", err))
	}
	return nil
}

// mapErr turns SDK errors into objstore sentinels, keeping the original.
func mapErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var sentinel error
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound":
			sentinel = objstore.ErrNotFound
		case "PreconditionFailed":
			sentinel = objstore.ErrPrecondition
		case "ConditionalRequestConflict":
			sentinel = objstore.ErrConflict
		case "AccessDenied", "Forbidden", "AllAccessDisabled":
			sentinel = objstore.ErrPermission
		case "KeyTooLongError", "InvalidObjectName":
			sentinel = objstore.ErrInvalidKey
		case "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout", "XMinioServerNotInitialized":
			sentinel = objstore.ErrUnavailable
		// Out of space: MinIO's drives below their free-space threshold
		// (507), a MinIO bucket's hard quota (400), a Ceph RGW user or
		// bucket quota (403, which must not read as AccessDenied).
		case "XMinioStorageFull", "XMinioAdminBucketQuotaExceeded", "QuotaExceeded":
			sentinel = objstore.ErrNoSpace
		// The object is over the store's size limit for one PUT (5 GiB on
		// AWS); freeing space would not help.
		case "EntityTooLarge":
			sentinel = objstore.ErrTooLarge
		}
	}
	var respErr *awshttp.ResponseError
	if sentinel == nil && errors.As(err, &respErr) {
		switch respErr.HTTPStatusCode() {
		case http.StatusNotFound:
			sentinel = objstore.ErrNotFound
		case http.StatusPreconditionFailed:
			sentinel = objstore.ErrPrecondition
		case http.StatusConflict:
			sentinel = objstore.ErrConflict
		case http.StatusForbidden:
			sentinel = objstore.ErrPermission
		case http.StatusInsufficientStorage:
			// Not a passing outage like the other 5xx: the SDK does not
			// retry it, and neither should callers until space is freed.
			sentinel = objstore.ErrNoSpace
		default:
			if respErr.HTTPStatusCode() >= 500 {
				sentinel = objstore.ErrUnavailable
			}
		}
	}
	// No answer at all (refused, reset, DNS, a timeout of the transport):
	// the SDK has retried already, so the store is down for now.
	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	var quotaErr ratelimit.QuotaExceededError // retries used up by an outage
	if sentinel == nil && (errors.As(err, &sendErr) || errors.As(err, &netErr) || errors.As(err, &quotaErr)) {
		sentinel = objstore.ErrUnavailable
	}
	if sentinel == nil {
		return fmt.Errorf("s3 %s %q: %w", op, key, err)
	}
	return fmt.Errorf("s3 %s %q: %w: %w", op, key, sentinel, err)
}

func isStatus(err error, code int) bool {
	var respErr *awshttp.ResponseError
	return errors.As(err, &respErr) && respErr.HTTPStatusCode() == code
}

// ETags travel quoted in HTTP; objstore keeps them bare.
func unquote(etag *string) string { return strings.Trim(aws.ToString(etag), `"`) }
func quote(etag string) string    { return `"` + strings.Trim(etag, `"`) + `"` }

// Get implements objstore.Bucket.
func (b *Bucket) Get(ctx context.Context, key string) (io.ReadCloser, objstore.Attributes, error) {
	out, err := b.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return nil, objstore.Attributes{}, mapErr("get", key, err)
	}
	return body{out.Body, key}, objstore.Attributes{
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    unquote(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
		Mode:    modeOf(out.Metadata),
	}, nil
}

// modeOf reads the file mode recorded in an object's metadata, in any of
// the forms filemode.Parse takes; 0 when there is none. Metadata keys
// arrive as the server spells them, so the match ignores case.
func modeOf(md map[string]string) fs.FileMode {
	for k, v := range md {
		if strings.EqualFold(k, filemode.MetadataKey) {
			return filemode.Parse(v)
		}
	}
	return 0
}

// body maps the errors of reading an object's body, which the SDK passes
// through as the transport gives them: a body cut short (the connection
// closed before Content-Length bytes, io.ErrUnexpectedEOF) or reset
// midway is the store failing for now, as a refused request is, and a
// retry may read it whole.
type body struct {
	io.ReadCloser
	key string
}

func (b body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = bodyErr(b.key, err)
	}
	return n, err
}

// bodyErr wraps a failed body read: the caller's context error stays
// itself, anything else is ErrUnavailable (the SDK does not retry a body
// read, and nothing the store sent can be trusted past the break).
func bodyErr(key string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("s3 get %q: body read cut short: %w: %w", key, objstore.ErrUnavailable, err)
}

// GetRange implements objstore.Bucket.
func (b *Bucket) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, objstore.Attributes, error) {
	if offset < 0 {
		return nil, objstore.Attributes{}, fmt.Errorf("s3 get %q: negative offset", key)
	}
	if offset == 0 && length < 0 {
		return b.Get(ctx, key)
	}
	if length == 0 {
		a, err := b.Stat(ctx, key)
		return io.NopCloser(bytes.NewReader(nil)), a, err
	}
	rng := fmt.Sprintf("bytes=%d-", offset)
	if length > 0 {
		rng += strconv.FormatInt(offset+length-1, 10)
	}
	out, err := b.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &b.bucket, Key: &key, Range: &rng})
	if isStatus(err, http.StatusRequestedRangeNotSatisfiable) {
		// The range starts at or past the end: an empty read, if the object exists.
		a, err := b.Stat(ctx, key)
		if err != nil {
			return nil, a, err
		}
		return io.NopCloser(bytes.NewReader(nil)), a, nil
	}
	if err != nil {
		return nil, objstore.Attributes{}, mapErr("get", key, err)
	}
	a := objstore.Attributes{
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    unquote(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
		Mode:    modeOf(out.Metadata),
	}
	// Content-Range is "bytes start-end/total"; the object's size is total.
	if cr := aws.ToString(out.ContentRange); cr != "" {
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			if total, err := strconv.ParseInt(cr[i+1:], 10, 64); err == nil {
				a.Size = total
			}
		}
	}
	return body{out.Body, key}, a, nil
}

// Stat implements objstore.Bucket.
func (b *Bucket) Stat(ctx context.Context, key string) (objstore.Attributes, error) {
	out, err := b.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b.bucket, Key: &key})
	if err != nil {
		return objstore.Attributes{}, mapErr("stat", key, err)
	}
	return objstore.Attributes{
		Size:    aws.ToInt64(out.ContentLength),
		ETag:    unquote(out.ETag),
		ModTime: aws.ToTime(out.LastModified),
		Mode:    modeOf(out.Metadata),
	}, nil
}

// spoolLimit is the largest body buffered in memory to make it seekable;
// larger ones go through a temp file.
const spoolLimit = 8 << 20

// Put implements objstore.Bucket with S3 conditional writes (If-Match,
// If-None-Match: *), which S3 and MinIO evaluate atomically.
func (b *Bucket) Put(ctx context.Context, key string, r io.Reader, size int64, opts objstore.PutOptions) (objstore.Attributes, error) {
	// The SDK signs the payload hash over plain HTTP, which needs a seekable
	// body with a known length.
	body, n, cleanup, err := seekable(r, size)
	if err != nil {
		return objstore.Attributes{}, fmt.Errorf("s3 put %q: %w", key, err)
	}
	defer cleanup()
	in := &awss3.PutObjectInput{Bucket: &b.bucket, Key: &key, Body: body, ContentLength: aws.Int64(n)}
	if opts.IfMatch != "" {
		in.IfMatch = aws.String(quote(opts.IfMatch))
	}
	if opts.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if opts.Mode != 0 {
		in.Metadata = map[string]string{filemode.MetadataKey: filemode.Format(opts.Mode)}
	}
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		err = mapErr("put", key, err)
		// AWS answers If-Match on a missing key with 404: the condition failed.
		if opts.IfMatch != "" && errors.Is(err, objstore.ErrNotFound) {
			err = fmt.Errorf("s3 put %q: object missing: %w", key, objstore.ErrPrecondition)
		}
		return objstore.Attributes{}, err
	}
	return objstore.Attributes{Size: n, ETag: unquote(out.ETag), ModTime: time.Now(), Mode: opts.Mode.Perm()}, nil
}

func seekable(r io.Reader, size int64) (io.ReadSeeker, int64, func(), error) {
	noop := func() {}
	if rs, ok := r.(io.ReadSeeker); ok && size >= 0 {
		return rs, size, noop, nil
	}
	if size >= 0 && size <= spoolLimit {
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, 0, noop, fmt.Errorf("read body: %w", err)
		}
		return bytes.NewReader(buf), size, noop, nil
	}
	f, err := os.CreateTemp("", "skillsvc-put-*")
	if err != nil {
		return nil, 0, noop, err
	}
	cleanup := func() { f.Close(); os.Remove(f.Name()) }
	n, err := io.Copy(f, r)
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("read %d bytes, want %d", n, size)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		cleanup()
		return nil, 0, noop, err
	}
	return f, n, cleanup, nil
}

// Delete implements objstore.Bucket.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b.bucket, Key: &key})
	if err = mapErr("delete", key, err); errors.Is(err, objstore.ErrNotFound) {
		return nil
	}
	return err
}

// List implements objstore.Bucket with ListObjectsV2.
func (b *Bucket) List(ctx context.Context, opts objstore.ListOptions) (objstore.ListPage, error) {
	maxKeys := opts.MaxKeys
	if maxKeys <= 0 {
		maxKeys = objstore.DefaultMaxKeys
	}
	in := &awss3.ListObjectsV2Input{
		Bucket:  &b.bucket,
		Prefix:  aws.String(opts.Prefix),
		MaxKeys: aws.Int32(int32(min(maxKeys, 1000))),
	}
	if opts.Delimiter != "" {
		in.Delimiter = aws.String(opts.Delimiter)
	}
	if opts.Token != "" {
		in.ContinuationToken = aws.String(opts.Token)
	} else if opts.StartAfter != "" {
		in.StartAfter = aws.String(opts.StartAfter)
	}
	out, err := b.client.ListObjectsV2(ctx, in)
	if err != nil {
		return objstore.ListPage{}, mapErr("list", opts.Prefix, err)
	}
	page := objstore.ListPage{
		Objects:        make([]objstore.Object, 0, len(out.Contents)),
		CommonPrefixes: make([]string, 0, len(out.CommonPrefixes)),
	}
	for _, o := range out.Contents {
		page.Objects = append(page.Objects, objstore.Object{
			Key: aws.ToString(o.Key),
			Attributes: objstore.Attributes{
				Size:    aws.ToInt64(o.Size),
				ETag:    unquote(o.ETag),
				ModTime: aws.ToTime(o.LastModified),
			},
		})
	}
	for _, p := range out.CommonPrefixes {
		page.CommonPrefixes = append(page.CommonPrefixes, aws.ToString(p.Prefix))
	}
	if aws.ToBool(out.IsTruncated) {
		page.NextToken = aws.ToString(out.NextContinuationToken)
	}
	return page, nil
}
