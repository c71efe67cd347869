package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/watch"
)

// invalidationTopic is the Redis pub/sub channel (under the cache's key
// prefix) on which replicas tell each other which library to forget.
const invalidationTopic = "skills-invalidations"

// validateEvents checks the event endpoint against the rest: it is served
// on the HTTP listener, beside paths it must not shadow, for the S3 bucket.
func (c *Config) validateEvents() error {
	if err := c.Events.Validate(); err != nil {
		return err
	}
	if !c.Events.Enabled() {
		return nil
	}
	if c.Storage != "s3" {
		return errors.New("events need --storage=s3: only object storage sends change events")
	}
	if !c.Events.Webhook() {
		return nil
	}
	switch {
	case c.HTTPListen == "":
		return errors.New("events.webhook-token-file needs --http.listen: the event endpoint is served there")
	case c.Events.Path == "/mcp" || strings.HasPrefix(c.Events.Path, "/mcp/") || strings.HasPrefix(c.Events.Path, "/skillsvc."):
		return fmt.Errorf("events.path %q would shadow the MCP or JSON endpoints", c.Events.Path)
	}
	return nil
}

// newEvents builds the S3 event receiver over the catalog: the webhook
// endpoint and the SQS consumer, as configured. With Redis it tells the
// other replicas through a topic on a client of its own (a subscription
// holds a connection); without, changes apply to this replica, the only one
// sharing nothing.
func newEvents(ctx context.Context, cfg Config, cat *skills.Catalog, reg prometheus.Registerer, auditLog *audit.Logger, log *slog.Logger) (*events.Receiver, func(), error) {
	o := events.Options{Bucket: cfg.S3.Bucket, Registerer: reg, Audit: auditLog, Log: log}
	if cfg.Events.SQS.Enabled() {
		client, err := events.NewSQSClient(ctx, cfg.Events.SQS, cfg.S3.Region)
		if err != nil {
			return nil, nil, err
		}
		o.SQS = client
	}
	closeRedis := func() {}
	if cfg.Cache.Redis.Enabled() {
		red, err := cache.NewRedis(cfg.Cache.Redis)
		if err != nil {
			return nil, nil, err
		}
		o.Topic = red.Topic(invalidationTopic)
		closeRedis = func() { _ = red.Close() }
	} else {
		log.Warn("events: no Redis (--cache.redis.addrs): changes apply to this replica only; other replicas see them within --skills.index-refresh")
	}
	rcv, err := events.New(cfg.Events, cat, o)
	if err != nil {
		closeRedis()
		return nil, nil, err
	}
	log.Info("events: accepting S3 event notifications", "webhook", cfg.Events.Webhook(), "path", cfg.Events.Path, "sqs", cfg.Events.SQS.QueueURL,
		"bucket", cfg.S3.Bucket, "replicas_told", o.Topic != nil, "index_refresh", cfg.Skills.IndexRefresh, "index_max_stale", cfg.Skills.IndexMaxStale)
	return rcv, func() { rcv.Close(); closeRedis() }, nil
}

// watchTopic is the Redis pub/sub channel on which replicas tell each
// other that a library changed through them (API writes, settings, S3
// events), for the watch feeds: the invalidation topic carries only what
// S3 events say.
const watchTopic = "skills-changes"

// feedTopic is the change feed's topic between replicas, on a Redis client
// of its own (a subscription holds a connection), when there is Redis;
// closeTopic closes that client, after the feed.
func feedTopic(cfg Config) (_ watch.Topic, closeTopic func(), _ error) {
	if !cfg.Cache.Redis.Enabled() {
		return nil, func() {}, nil
	}
	red, err := cache.NewRedis(cfg.Cache.Redis)
	if err != nil {
		return nil, nil, err
	}
	return red.Topic(watchTopic), func() { _ = red.Close() }, nil
}

// notifyPublished tells the other replicas of a change LibraryService made,
// as a bucket event of the library would: through the receiver's paced
// queue, which drops the library's index again, publishes it on the topic
// and rechecks it a second later.
func notifyPublished(rcv *events.Receiver, cat *skills.Catalog, bucket string, log *slog.Logger) func(context.Context, layout.LibraryRef) {
	return func(ctx context.Context, l layout.LibraryRef) {
		prefix, err := cat.LibraryPrefix(l)
		if err == nil {
			_, err = rcv.Apply(ctx, []events.Record{{Event: "ObjectCreated:Put", Bucket: bucket, Key: prefix + "_/SKILL.md"}})
		}
		if err != nil {
			log.WarnContext(ctx, "library: telling the other replicas of a change failed; they see it within --skills.index-refresh", "user", l.User, "shared", l.Shared, "err", err)
		}
	}
}
