package events

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/options"
)

// Config configures the event paths: the webhook endpoint (on with a token
// file) and the SQS consumer (on with a queue URL). Events are off unless
// one is.
type Config struct {
	// WebhookTokenFile holds the secret the sender puts in its
	// Authorization header (MinIO's notify_webhook auth_token).
	WebhookTokenFile string
	// Path is where the HTTP listener accepts events.
	Path string
	// MaxBodyBytes bounds one request's body.
	MaxBodyBytes int64
	// MaxRecords bounds the records of one request.
	MaxRecords int
	// ReloadInterval is how often the token file is checked for a new
	// token.
	ReloadInterval time.Duration
	// DropRate and DropConcurrency pace the drops events cause (each a few
	// Redis deletes, a storage delete and a message to the other
	// replicas): however many events arrive, a replica starts at most
	// DropRate a second and runs at most DropConcurrency at once, so a
	// burst cannot take the shared Redis pool from other tenants' calls.
	DropRate        float64
	DropConcurrency int
	// MaxPending bounds the libraries waiting for a drop or a recheck. A
	// library already waiting is not queued twice; an event naming a new
	// one beyond the bound is refused (503, retried by the sender).
	MaxPending int
	// SQS consumes the queue AWS S3 (directly or through SNS) sends the
	// bucket's events to.
	SQS SQSConfig
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *Config) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.WebhookTokenFile, prefix+"webhook-token-file", "", "File holding the token object storage's webhook sends in its Authorization header (MinIO: notify_webhook auth_token; \"Bearer <token>\" or the token itself is accepted). Setting it turns on the S3 event endpoint at events.path on the HTTP listener; reloaded when it changes.")
	f.StringVar(&c.Path, prefix+"path", "/events/s3", "Path on the HTTP listener (--http.listen) accepting S3 event notifications (POST).")
	f.Int64Var(&c.MaxBodyBytes, prefix+"max-body-bytes", 1<<20, "Largest event request body (and SQS message); larger ones are refused (413; an SQS message is deleted).")
	f.IntVar(&c.MaxRecords, prefix+"max-records", 1000, "Most event records in one request or SQS message; more are refused (400; an SQS message is deleted).")
	f.DurationVar(&c.ReloadInterval, prefix+"reload-interval", 10*time.Second, "How often the token file is checked for a new token.")
	f.Float64Var(&c.DropRate, prefix+"drop-rate", 100, "Most library drops (a few Redis deletes, a storage delete and a message to the other replicas each) this replica starts per second for events; the rest wait their turn, each library queued once however many events name it.")
	f.IntVar(&c.DropConcurrency, prefix+"drop-concurrency", 4, "Most drops for events under way at once on this replica.")
	f.IntVar(&c.MaxPending, prefix+"max-pending", 10000, "Most libraries waiting for a drop or its recheck; an event request (or SQS message) naming another library beyond it is refused (503 with Retry-After; the message is received again).")
	options.Tag(f, options.Basic, prefix+"webhook-token-file")
	c.SQS.RegisterFlagsWithPrefix(prefix+"sqs.", f)
}

// Enabled reports whether any event path is on.
func (c *Config) Enabled() bool { return c.Webhook() || c.SQS.Enabled() }

// Webhook reports whether the webhook endpoint is on.
func (c *Config) Webhook() bool { return c.WebhookTokenFile != "" }

// ErrInvalidConfig: Validate found a setting it cannot use.
var ErrInvalidConfig = errors.New("events: invalid configuration")

// Validate checks the settings without reading the token file.
func (c *Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if err := c.SQS.Validate(); err != nil {
		return err
	}
	switch {
	case c.MaxBodyBytes <= 0 || c.MaxRecords <= 0:
		return fmt.Errorf("%w: max-body-bytes and max-records must be positive", ErrInvalidConfig)
	case !(c.DropRate > 0) || math.IsInf(c.DropRate, 1) || c.DropConcurrency <= 0 || c.MaxPending <= 0:
		return fmt.Errorf("%w: drop-rate, drop-concurrency and max-pending must be positive", ErrInvalidConfig)
	case !c.Webhook():
		return nil
	case !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, " {}?#") || c.Path == "/":
		return fmt.Errorf("%w: path %q must be an absolute URL path such as /events/s3", ErrInvalidConfig, c.Path)
	}
	return nil
}

// minTokenBytes keeps a guessable token out: the endpoint drops indexes,
// which costs storage requests.
const minTokenBytes = 16

// parseToken reads the token file: its content less surrounding space.
func parseToken(b []byte) (string, error) {
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenBytes {
		return "", fmt.Errorf("%w: the webhook token must be at least %d bytes", ErrInvalidConfig, minTokenBytes)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("%w: the webhook token must be one line", ErrInvalidConfig)
	}
	return tok, nil
}
