package events

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/filewatch"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/skills"
)

// Catalog is what the receiver needs of the skills catalog
// (*skills.Catalog).
type Catalog interface {
	ChangeOf(key string) skills.Change
	Invalidate(ctx context.Context, ch skills.Change) error
	Forget(ch skills.Change) error
	ForgetAll()
}

// Topic carries invalidations to the other replicas (*cache.Topic on
// Redis).
type Topic interface {
	Publish(ctx context.Context, msg []byte) error
	Subscribe(onMessage func([]byte), subscribed func()) (stop func())
}

// Options are the receiver's collaborators.
type Options struct {
	// Bucket is the bucket the libraries live in: another bucket's events
	// are ignored. Empty accepts every bucket's.
	Bucket string
	// Topic tells the other replicas; nil when there are none (no Redis).
	Topic Topic
	// SQS is the client of the queue Config.SQS names (NewSQSClient);
	// needed when it names one.
	SQS        SQSAPI
	Registerer prometheus.Registerer
	Log        *slog.Logger
}

// Receiver applies S3 event notifications: those posted to its webhook
// endpoint and those its SQS consumer receives. It subscribes to the other
// replicas' invalidations.
type Receiver struct {
	cfg     Config
	catalog Catalog
	bucket  string
	topic   Topic
	self    string                        // this replica, so it skips its own messages
	token   *filewatch.Value[tokenHashes] // nil without the webhook
	sqs     *sqsConsumer                  // nil without a queue
	metrics *metrics
	log     *slog.Logger
	stop    func()
	recheck *rechecker
}

// tokenHashes are the Authorization values the token admits, hashed so the
// comparison takes the same time whatever their lengths.
type tokenHashes struct{ plain, bearer [sha256.Size]byte }

// applyTimeout bounds the invalidations of one request, which go on when
// the sender hangs up: the change happened either way.
const applyTimeout = 30 * time.Second

// New reads the webhook's token file (failing when it is unreadable or too
// short), starts the SQS consumer when cfg names a queue, and subscribes to
// the other replicas' invalidations when o.Topic is set. Close stops them.
func New(cfg Config, catalog Catalog, o Options) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case !cfg.Enabled():
		return nil, fmt.Errorf("%w: neither a webhook token file nor an SQS queue", ErrInvalidConfig)
	case cfg.SQS.Enabled() && o.SQS == nil:
		return nil, fmt.Errorf("%w: an SQS queue without a client", ErrInvalidConfig)
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "events")
	r := &Receiver{
		cfg: cfg, catalog: catalog, bucket: o.Bucket, topic: o.Topic, self: rand.Text(),
		metrics: newMetrics(o.Registerer), log: log, stop: func() {},
	}
	if cfg.Webhook() {
		tok, err := filewatch.Watch([]string{cfg.WebhookTokenFile}, cfg.ReloadInterval, func(c [][]byte) (tokenHashes, error) {
			t, err := parseToken(c[0])
			if err != nil {
				return tokenHashes{}, err
			}
			return tokenHashes{plain: sha256.Sum256([]byte(t)), bearer: sha256.Sum256([]byte("Bearer " + t))}, nil
		}, log)
		if err != nil {
			return nil, fmt.Errorf("events: webhook-token-file: %w", err)
		}
		r.token = tok
	}
	r.recheck = newRechecker(r.reapply)
	if r.topic != nil {
		// The topic calls these in its own goroutine: a panic there is
		// logged, not the end of the process.
		r.stop = r.topic.Subscribe(
			func(b []byte) { panics.Logged(r.log, "events: a peer's invalidation", func() { r.fromPeer(b) }) },
			func() { panics.Logged(r.log, "events: resync", r.resync) })
	}
	if cfg.SQS.Enabled() {
		r.sqs = &sqsConsumer{
			api: o.SQS, cfg: cfg.SQS, maxBody: cfg.MaxBodyBytes, maxRecords: cfg.MaxRecords,
			apply: r.Apply, metrics: r.metrics, log: log,
		}
		r.sqs.start()
	}
	return r, nil
}

// Close stops the SQS consumer (after the batch it is applying), cancels
// the rechecks not yet due, and stops the subscription and the token
// file's watch.
func (r *Receiver) Close() {
	if r.sqs != nil {
		r.sqs.stop()
	}
	r.recheck.close()
	r.stop()
	if r.token != nil {
		r.token.Close()
	}
}

// ServeHTTP accepts one S3 event notification: 401 without the token, 413
// over the body bound, 400 when it is no S3 event notification, 503 when an
// invalidation failed (a sender with a queue retries), else 200 with the
// count of records applied.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !r.authorized(req.Header.Get("Authorization")) {
		r.metrics.rejected.WithLabelValues(rejectedUnauthorized).Inc()
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillsvc events"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		r.metrics.rejected.WithLabelValues(rejectedTooLarge).Inc()
		http.Error(w, fmt.Sprintf("event body larger than %d bytes (--events.max-body-bytes)", r.cfg.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		r.metrics.rejected.WithLabelValues(rejectedMalformed).Inc()
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	recs, err := Parse(body, r.cfg.MaxRecords)
	if err != nil {
		r.metrics.rejected.WithLabelValues(rejectedMalformed).Inc()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), applyTimeout)
	defer cancel()
	applied, err := r.Apply(ctx, recs)
	if err != nil {
		r.log.WarnContext(ctx, "events: invalidating a library failed; polling (--skills.index-refresh) still bounds its staleness", "err", err)
		http.Error(w, "invalidating failed", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"received\":%d,\"applied\":%d}\n", len(recs), applied)
}

// authorized compares in constant time: the header must be the token, or
// "Bearer " and the token (MinIO adds "Bearer" to a one-word auth_token).
func (r *Receiver) authorized(header string) bool {
	if r.token == nil {
		return false // no webhook: nothing is posted here
	}
	want := r.token.Load()
	got := sha256.Sum256([]byte(header))
	return subtle.ConstantTimeCompare(got[:], want.plain[:])|subtle.ConstantTimeCompare(got[:], want.bearer[:]) == 1
}

// Apply invalidates what recs changed, each library once, tells the other
// replicas of each library dropped, and schedules the change's recheck. It
// goes on past a failure and returns every failure, joined, with the count
// of changes applied.
func (r *Receiver) Apply(ctx context.Context, recs []Record) (applied int, err error) {
	r.metrics.received.Add(float64(len(recs)))
	seen := map[skills.Change]bool{}
	var errs []error
	for _, rec := range recs {
		switch {
		case !rec.changes():
			r.metrics.ignored.WithLabelValues(ignoredEvent).Inc()
			continue
		case r.bucket != "" && rec.Bucket != r.bucket:
			r.metrics.ignored.WithLabelValues(ignoredBucket).Inc()
			continue
		}
		ch := r.catalog.ChangeOf(rec.Key)
		switch {
		case ch.Kind == skills.Unrelated:
			r.metrics.ignored.WithLabelValues(ignoredUnrelated).Inc()
			continue
		case ch.Kind == skills.PersistedIndex:
			r.metrics.ignored.WithLabelValues(ignoredOwnIndex).Inc()
			continue
		case seen[ch]:
			r.metrics.ignored.WithLabelValues(ignoredDuplicate).Inc()
			continue
		}
		seen[ch] = true
		if err := r.catalog.Invalidate(ctx, ch); err != nil {
			r.metrics.failed.Inc()
			errs = append(errs, fmt.Errorf("%s %q: %w", rec.Event, rec.Key, err))
			continue
		}
		r.metrics.applied.WithLabelValues(changeLabel(ch)).Inc()
		applied++
		r.log.DebugContext(ctx, "events: applied", "event", rec.Event, "key", rec.Key, "user", ch.Library.User, "shared", ch.Library.Shared)
		if err := r.publish(ctx, ch); err != nil {
			errs = append(errs, err)
		}
		r.recheck.schedule(ch)
	}
	return applied, errors.Join(errs...)
}

// reapply applies ch once more, recheckAfter its last event (rechecker).
func (r *Receiver) reapply(ch skills.Change) {
	ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
	defer cancel()
	err := r.catalog.Invalidate(ctx, ch)
	if err == nil {
		err = r.publish(ctx, ch)
	}
	if err != nil {
		r.metrics.rechecks.WithLabelValues("error").Inc()
		r.log.WarnContext(ctx, "events: rechecking a library failed; polling (--skills.index-refresh) still bounds its staleness", "user", ch.Library.User, "shared", ch.Library.Shared, "err", err)
		return
	}
	r.metrics.rechecks.WithLabelValues("ok").Inc()
}

func changeLabel(ch skills.Change) string {
	switch {
	case ch.Kind == skills.Settings:
		return changeSettings
	case ch.Library.Shared:
		return changeSharedLibrary
	case ch.Library.Team != "":
		return changeTeamLibrary
	}
	return changeUserLibrary
}

// peerMessage tells the other replicas which library to forget.
type peerMessage struct {
	From   string `json:"from"`
	User   string `json:"user,omitempty"`
	Shared bool   `json:"shared,omitempty"`
	Team   string `json:"team,omitempty"`
}

// maxPeerMessageBytes bounds a message read from Redis, which anyone with
// access to it can publish.
const maxPeerMessageBytes = 4 << 10

// publish tells the other replicas to forget the library ch dropped. A
// user's settings live in the shared cache alone: nothing to tell.
func (r *Receiver) publish(ctx context.Context, ch skills.Change) error {
	if r.topic == nil || ch.Kind != skills.LibraryFile {
		return nil
	}
	b, err := json.Marshal(peerMessage{From: r.self, User: ch.Library.User, Shared: ch.Library.Shared, Team: ch.Library.Team})
	if err != nil {
		return err
	}
	if err := r.topic.Publish(ctx, b); err != nil {
		r.metrics.peer.WithLabelValues(peerPublishFailed).Inc()
		return fmt.Errorf("telling the other replicas: %w", err)
	}
	r.metrics.peer.WithLabelValues(peerSent).Inc()
	return nil
}

// fromPeer applies another replica's invalidation to this process.
func (r *Receiver) fromPeer(b []byte) {
	var m peerMessage
	if len(b) > maxPeerMessageBytes || json.Unmarshal(b, &m) != nil {
		r.metrics.peer.WithLabelValues(peerInvalid).Inc()
		r.log.Warn("events: ignoring a malformed message from another replica", "bytes", len(b))
		return
	}
	if m.From == r.self {
		return // dropped here before it was sent
	}
	ch := skills.Change{Kind: skills.LibraryFile, Library: skills.LibraryRef{User: m.User, Shared: m.Shared, Team: m.Team}}
	if err := r.catalog.Forget(ch); err != nil {
		r.metrics.peer.WithLabelValues(peerInvalid).Inc()
		r.log.Warn("events: ignoring a message from another replica", "err", err)
		return
	}
	r.metrics.peer.WithLabelValues(peerApplied).Inc()
}

// resync runs each time the subscription is established: what was published
// before may have been missed, so every index this replica holds is read
// again from the shared cache.
func (r *Receiver) resync() {
	r.metrics.resyncs.Inc()
	r.catalog.ForgetAll()
	r.log.Debug("events: subscribed to the other replicas' invalidations; held library indexes dropped")
}
