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
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/skillsvc/skillsvc/internal/audit"
	"github.com/skillsvc/skillsvc/internal/filewatch"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/panics"
	"github.com/skillsvc/skillsvc/internal/requestid"
)

// Catalog is what the receiver needs of the skills catalog
// (*skills.Catalog).
type Catalog interface {
	ChangeOf(key string) layout.Change
	Invalidate(ctx context.Context, ch layout.Change) error
	Forget(ch layout.Change) error
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
	// Audit records the event requests refused (nil: none).
	Audit *audit.Logger
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
	audit   *audit.Logger // nil writes nothing
	log     *slog.Logger
	stop    func()
	queue   *dropQueue
}

// tokenHashes are the Authorization values the token admits, hashed so the
// comparison takes the same time whatever their lengths.
type tokenHashes struct{ plain, bearer [sha256.Size]byte }

// applyTimeout bounds one drop, and an SQS batch's handling.
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
		metrics: newMetrics(o.Registerer), audit: o.Audit, log: log, stop: func() {},
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
	r.queue = newDropQueue(cfg, r.drop, r.metrics, log)
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

// Close stops the SQS consumer (after the batch it is applying), forgets
// the drops not yet started (polling bounds their staleness), waits for
// those running, and stops the subscription and the token file's watch.
func (r *Receiver) Close() {
	if r.sqs != nil {
		r.sqs.stop()
	}
	r.queue.close()
	r.stop()
	if r.token != nil {
		r.token.Close()
	}
}

// ServeHTTP accepts one S3 event notification: 401 without the token, 413
// over the body bound, 400 when it is no S3 event notification, 503 with
// Retry-After when the drop queue is full (a sender with a queue retries),
// else 200 with the count of records and of changes accepted. Drops run
// after the answer, paced (dropQueue). Every refusal is audited.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	ctx := requestid.NewContext(req.Context(), requestid.Pick(req.Header.Values(requestid.Key)))
	refuse := func(httpCode int, reason string, code codes.Code, msg string) {
		r.metrics.rejected.WithLabelValues(reason).Inc()
		r.audit.Refused(ctx, r.cfg.Path, start, status.Error(code, msg))
		http.Error(w, msg, httpCode)
	}
	if !r.authorized(req.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="skillsvc events"`)
		refuse(http.StatusUnauthorized, rejectedUnauthorized, codes.Unauthenticated, "unauthorized")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		refuse(http.StatusRequestEntityTooLarge, rejectedTooLarge, codes.ResourceExhausted, fmt.Sprintf("event body larger than %d bytes (--events.max-body-bytes)", r.cfg.MaxBodyBytes))
		return
	case err != nil:
		refuse(http.StatusBadRequest, rejectedMalformed, codes.InvalidArgument, "reading the body: "+err.Error())
		return
	}
	recs, err := Parse(body, r.cfg.MaxRecords)
	if err != nil {
		refuse(http.StatusBadRequest, rejectedMalformed, codes.InvalidArgument, err.Error())
		return
	}
	accepted, err := r.Apply(ctx, recs)
	if err != nil {
		w.Header().Set("Retry-After", strconv.Itoa(int(r.queue.retryAfter()/time.Second)))
		refuse(http.StatusServiceUnavailable, rejectedOverloaded, codes.Unavailable, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, "{\"received\":%d,\"applied\":%d}\n", len(recs), accepted)
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

// Apply queues the drop of what recs changed, each library once (a library
// already waiting for its drop or recheck is not queued again), and returns
// the count of changes accepted. Past Config.MaxPending libraries it goes on
// (later records may name libraries already waiting) and returns
// ErrOverloaded: the sender should try again later, when the records
// accepted meanwhile cost nothing more.
func (r *Receiver) Apply(ctx context.Context, recs []Record) (accepted int, err error) {
	r.metrics.received.Add(float64(len(recs)))
	seen := map[layout.Change]bool{}
	var refused error
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
		case ch.Kind == layout.Unrelated:
			r.metrics.ignored.WithLabelValues(ignoredUnrelated).Inc()
			continue
		case ch.Kind == layout.PersistedIndex:
			r.metrics.ignored.WithLabelValues(ignoredOwnIndex).Inc()
			continue
		case seen[ch]:
			r.metrics.ignored.WithLabelValues(ignoredDuplicate).Inc()
			continue
		}
		seen[ch] = true
		coalesced, err := r.queue.add(ch)
		if err != nil {
			refused = err
			continue
		}
		if coalesced {
			r.metrics.coalesced.Inc()
		}
		r.metrics.applied.WithLabelValues(changeLabel(ch)).Inc()
		accepted++
		r.log.DebugContext(ctx, "events: accepted", "event", rec.Event, "key", rec.Key, "user", ch.Library.User, "shared", ch.Library.Shared, "team", ch.Library.Team, "coalesced", coalesced)
	}
	if refused != nil {
		r.log.WarnContext(ctx, "events: refusing changes: too many libraries wait for a drop (--events.max-pending); the sender retries, polling (--skills.index-refresh) bounds staleness meanwhile", "accepted", accepted, "err", refused)
	}
	return accepted, refused
}

// drop applies ch on this replica and in the shared cache, and tells the
// other replicas: the work of one turn of the queue.
func (r *Receiver) drop(ctx context.Context, ch layout.Change) error {
	if err := r.catalog.Invalidate(ctx, ch); err != nil {
		return err
	}
	return r.publish(ctx, ch)
}

func changeLabel(ch layout.Change) string {
	switch {
	case ch.Kind == layout.Settings:
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
func (r *Receiver) publish(ctx context.Context, ch layout.Change) error {
	if r.topic == nil || ch.Kind != layout.LibraryFile {
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
	ch := layout.Change{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: m.User, Shared: m.Shared, Team: m.Team}}
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
