package events

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/skillsvc/skillsvc/internal/options"
	"github.com/skillsvc/skillsvc/internal/panics"
)

// SQSConfig configures the consumer of the SQS queue AWS S3 sends the
// bucket's event notifications to, directly or through an SNS topic.
type SQSConfig struct {
	QueueURL string
	// Endpoint is an SQS-compatible server's URL; empty uses AWS.
	Endpoint string
	// Region of the queue; empty is the bucket's (--s3.region): S3 sends
	// a bucket's notifications only to a queue in its own region.
	Region string
	// WaitTime is how long one ReceiveMessage waits for a message (long
	// polling): an idle queue costs one request per WaitTime per replica.
	WaitTime time.Duration
	// VisibilityTimeout hides a received message from the other replicas
	// while it is applied; one not deleted by then (the apply failed, the
	// replica died) is received again.
	VisibilityTimeout time.Duration
	// MaxMessages are received at once (SQS allows 1 to 10).
	MaxMessages int
}

// RegisterFlagsWithPrefix registers the flags with their defaults.
func (c *SQSConfig) RegisterFlagsWithPrefix(prefix string, f *flag.FlagSet) {
	f.StringVar(&c.QueueURL, prefix+"queue-url", "", "URL of the SQS queue the bucket's event notifications are sent to (S3 to SQS, or S3 to SNS to SQS, raw or not). Setting it turns on the consumer: every replica long-polls the queue, each message reaches one, which applies it and tells the others over Redis. Needs sqs:ReceiveMessage, sqs:DeleteMessage and sqs:GetQueueAttributes on the queue; credentials from the standard AWS chain.")
	f.StringVar(&c.Endpoint, prefix+"endpoint", "", "SQS endpoint URL for SQS-compatible servers. Empty uses AWS.")
	f.StringVar(&c.Region, prefix+"region", "", "Region of the SQS queue; empty is --s3.region (S3 notifies only queues in the bucket's region).")
	f.DurationVar(&c.WaitTime, prefix+"wait-time", 20*time.Second, "Long-polling wait of each ReceiveMessage (1s to 20s): an idle queue costs one request per wait per replica.")
	f.DurationVar(&c.VisibilityTimeout, prefix+"visibility-timeout", 2*time.Minute, "How long a received message stays hidden from the other replicas while it is applied; one not deleted by then is received again.")
	f.IntVar(&c.MaxMessages, prefix+"max-messages", 10, "Messages received at once (1 to 10).")
	options.Tag(f, options.Basic, prefix+"queue-url")
}

// Enabled reports whether the consumer is on.
func (c *SQSConfig) Enabled() bool { return c.QueueURL != "" }

// Validate checks the settings without calling SQS.
func (c *SQSConfig) Validate() error {
	if !c.Enabled() {
		return nil
	}
	u, err := url.Parse(c.QueueURL)
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(u.Path) < 2:
		return fmt.Errorf("%w: sqs.queue-url %q is not a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/skills-events", ErrInvalidConfig, c.QueueURL)
	case c.WaitTime < time.Second || c.WaitTime > 20*time.Second || c.WaitTime%time.Second != 0:
		return fmt.Errorf("%w: sqs.wait-time must be whole seconds from 1s to 20s, got %v", ErrInvalidConfig, c.WaitTime)
	case c.VisibilityTimeout < 2*applyTimeout || c.VisibilityTimeout > 12*time.Hour || c.VisibilityTimeout%time.Second != 0:
		// Longer than an apply can take, so a message being applied is
		// not received by another replica meanwhile.
		return fmt.Errorf("%w: sqs.visibility-timeout must be whole seconds from %v to 12h, got %v", ErrInvalidConfig, 2*applyTimeout, c.VisibilityTimeout)
	case c.MaxMessages < 1 || c.MaxMessages > 10:
		return fmt.Errorf("%w: sqs.max-messages must be from 1 to 10, got %d", ErrInvalidConfig, c.MaxMessages)
	}
	return nil
}

// SQSAPI is what the consumer calls of an SQS client (*sqs.Client).
type SQSAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// NewSQSClient builds the SQS client of cfg, in region unless cfg names
// one, with credentials from the standard AWS chain.
func NewSQSClient(ctx context.Context, cfg SQSConfig, region string) (*sqs.Client, error) {
	if cfg.Region != "" {
		region = cfg.Region
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("events: sqs: load AWS config: %w", err)
	}
	return sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
	}), nil
}

// snsEnvelope is what SNS delivers to a queue subscribed without raw
// message delivery: the S3 notification is the Message, as a string.
type snsEnvelope struct {
	Type      string  `json:"Type"`
	Message   *string `json:"Message"`
	TopicArn  string  `json:"TopicArn"`
	MessageID string  `json:"MessageId"`
}

// errSubscription: SNS asks to confirm a subscription of the queue (a
// topic in another account); nothing to apply, and nobody to tell but the
// operator.
var errSubscription = errors.New("an SNS subscription confirmation, not an event: confirm the subscription (the SubscribeURL in the message) or subscribe the queue from the topic's account")

// ParseMessage reads one SQS message body: an S3 event notification as S3
// sends it to a queue (or SNS with raw message delivery), or wrapped in an
// SNS notification envelope. S3's test event holds no records.
func ParseMessage(body []byte, maxRecords int) ([]Record, error) {
	var env snsEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("not an S3 event notification: %w", err)
	}
	switch env.Type {
	case "":
		return Parse(body, maxRecords)
	case "Notification":
		if env.Message == nil {
			return nil, errors.New("an SNS notification without a Message")
		}
		return Parse([]byte(*env.Message), maxRecords)
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		return nil, errSubscription
	}
	return nil, fmt.Errorf("an SNS message of type %q, not a notification", env.Type)
}

// sqsConsumer long-polls the queue and applies what each batch changed,
// deleting the messages once applied.
type sqsConsumer struct {
	api        SQSAPI
	cfg        SQSConfig
	maxBody    int64
	maxRecords int
	apply      func(context.Context, []Record) (int, error)
	metrics    *metrics
	log        *slog.Logger
	cancel     context.CancelFunc
	done       chan struct{}
}

// Backoff after a failed ReceiveMessage (SQS unreachable, no permission):
// doubling from the first to the last, jittered.
const (
	sqsFirstBackoff = time.Second
	sqsMaxBackoff   = 30 * time.Second
)

func (c *sqsConsumer) start() {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		c.run(ctx)
	}()
}

// stop ends the long poll under way and waits for the batch being applied.
func (c *sqsConsumer) stop() {
	c.cancel()
	<-c.done
}

func (c *sqsConsumer) run(ctx context.Context) {
	c.check(ctx)
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		err := panics.Guard(func() error { return c.poll(ctx) })()
		if err == nil || ctx.Err() != nil {
			backoff = 0
			continue
		}
		c.metrics.sqsErrors.WithLabelValues(sqsOpReceive).Inc()
		backoff = min(max(2*backoff, sqsFirstBackoff), sqsMaxBackoff)
		c.log.Warn("events: receiving from SQS failed; polling (--skills.index-refresh) still bounds how stale a library gets", "queue", c.cfg.QueueURL, "retry_in", backoff.Round(time.Second), "err", err)
		t := time.NewTimer(backoff/2 + rand.N(backoff/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// check tells the operator at start whether the queue is reachable with
// the credentials given; the consumer goes on either way (it retries).
func (c *sqsConsumer) check(ctx context.Context) {
	out, err := c.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(c.cfg.QueueURL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		if ctx.Err() == nil {
			c.metrics.sqsErrors.WithLabelValues(sqsOpAttributes).Inc()
			c.log.Warn("events: SQS queue not reachable (needs sqs:GetQueueAttributes, sqs:ReceiveMessage, sqs:DeleteMessage)", "queue", c.cfg.QueueURL, "err", err)
		}
		return
	}
	c.log.Info("events: consuming S3 event notifications from SQS", "queue", c.cfg.QueueURL, "arn", out.Attributes[string(types.QueueAttributeNameQueueArn)])
}

// poll receives one batch, applies every record in it (queues its drops),
// and deletes the messages applied and those that can never be
// (malformed). When the drop queue is full (ErrOverloaded) the batch's
// event messages stay: SQS delivers them again after the visibility
// timeout, and applying twice changes nothing.
func (c *sqsConsumer) poll(ctx context.Context) error {
	out, err := c.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(c.cfg.QueueURL),
		MaxNumberOfMessages: int32(c.cfg.MaxMessages),
		WaitTimeSeconds:     int32(c.cfg.WaitTime / time.Second),
		VisibilityTimeout:   int32(c.cfg.VisibilityTimeout / time.Second),
	})
	if err != nil {
		return err
	}
	var (
		recs            []Record
		applied, failed []types.DeleteMessageBatchRequestEntry
	)
	for i, m := range out.Messages {
		entry := types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
		body := aws.ToString(m.Body)
		var rs []Record
		if int64(len(body)) > c.maxBody {
			err = fmt.Errorf("a message of %d bytes, over --events.max-body-bytes (%d)", len(body), c.maxBody)
		} else {
			rs, err = ParseMessage([]byte(body), c.maxRecords)
		}
		if err != nil {
			// It would fail the same way each time it came back.
			c.metrics.sqsMessages.WithLabelValues(sqsMalformed).Inc()
			c.log.Warn("events: deleting an SQS message that is no S3 event notification", "queue", c.cfg.QueueURL, "message_id", aws.ToString(m.MessageId), "err", err)
			failed = append(failed, entry)
			continue
		}
		recs = append(recs, rs...)
		applied = append(applied, entry)
	}
	if len(recs) > 0 {
		// An apply under way finishes on shutdown: the change happened.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
		_, err := c.apply(actx, recs)
		cancel()
		if err != nil {
			c.metrics.sqsMessages.WithLabelValues(sqsRetried).Add(float64(len(applied)))
			c.log.Warn("events: SQS messages not applied; they are received again after the visibility timeout", "queue", c.cfg.QueueURL, "messages", len(applied), "err", err)
			applied = nil
		}
	}
	c.metrics.sqsMessages.WithLabelValues(sqsApplied).Add(float64(len(applied)))
	c.delete(ctx, append(applied, failed...))
	return nil
}

// delete deletes the messages of one batch; one whose delete fails comes
// back after the visibility timeout and is applied again, which is
// harmless.
func (c *sqsConsumer) delete(ctx context.Context, entries []types.DeleteMessageBatchRequestEntry) {
	if len(entries) == 0 {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	defer cancel()
	out, err := c.api.DeleteMessageBatch(dctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(c.cfg.QueueURL), Entries: entries})
	switch {
	case err != nil:
		c.metrics.sqsErrors.WithLabelValues(sqsOpDelete).Add(float64(len(entries)))
		c.log.Warn("events: deleting SQS messages failed; they will be received and applied again", "queue", c.cfg.QueueURL, "messages", len(entries), "err", err)
	case len(out.Failed) > 0:
		c.metrics.sqsErrors.WithLabelValues(sqsOpDelete).Add(float64(len(out.Failed)))
		c.log.Warn("events: some SQS messages not deleted; they will be received and applied again", "queue", c.cfg.QueueURL, "messages", len(out.Failed), "code", aws.ToString(out.Failed[0].Code), "err", aws.ToString(out.Failed[0].Message))
	}
}
