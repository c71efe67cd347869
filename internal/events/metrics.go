package events

import "github.com/prometheus/client_golang/prometheus"

// Reasons a record is ignored.
const (
	ignoredEvent     = "event_type"   // not a write or delete (a read, a restore)
	ignoredBucket    = "other_bucket" // another bucket's
	ignoredUnrelated = "unrelated"    // an object of no library (a workspace file)
	ignoredOwnIndex  = "own_index"    // a library index skillsvc persisted itself
	ignoredDuplicate = "duplicate"    // a library an earlier record of the request named
)

// Reasons a request is refused.
const (
	rejectedUnauthorized = "unauthorized"
	rejectedTooLarge     = "too_large"
	rejectedMalformed    = "malformed"
	rejectedOverloaded   = "overloaded"
)

// What was applied.
const (
	changeUserLibrary   = "user_library"
	changeSharedLibrary = "shared_library"
	changeTeamLibrary   = "team_library"
	changeSettings      = "settings"
)

// Messages between replicas.
const (
	peerSent          = "sent"
	peerPublishFailed = "publish_failed"
	peerApplied       = "applied"
	peerInvalid       = "invalid"
)

// SQS messages, by outcome, and failed SQS calls, by operation.
const (
	sqsApplied      = "applied"   // applied (or holding nothing to apply) and deleted
	sqsMalformed    = "malformed" // no S3 event notification: deleted
	sqsRetried      = "retried"   // refused (the drop queue is full): left to be received again
	sqsOpReceive    = "receive"
	sqsOpDelete     = "delete"
	sqsOpAttributes = "get_queue_attributes"
)

type metrics struct {
	received  prometheus.Counter
	applied   *prometheus.CounterVec // by change
	ignored   *prometheus.CounterVec // by reason
	coalesced prometheus.Counter
	rejected  *prometheus.CounterVec // requests, by reason
	peer      *prometheus.CounterVec // by outcome
	resyncs   prometheus.Counter
	pending   prometheus.Gauge
	drops     *prometheus.CounterVec // by result
	rechecks  *prometheus.CounterVec // by result

	sqsMessages *prometheus.CounterVec // by outcome
	sqsErrors   *prometheus.CounterVec // by operation
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_events_received_total",
			Help: "S3 event records received in authenticated, well-formed requests.",
		}),
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_applied_total",
			Help: "S3 event records accepted, each library once a request, by what they changed: user_library, team_library and shared_library (the library's index to be dropped here and in the shared cache, the other replicas told), settings (the user's cached settings to be dropped). skillsvc_events_drops_total counts the drops.",
		}, []string{"change"}),
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_ignored_total",
			Help: "S3 event records ignored, by reason: event_type (not a write or delete), other_bucket, unrelated (no library's object), own_index (an index skillsvc persisted), duplicate (a library an earlier record of the same request named).",
		}, []string{"reason"}),
		coalesced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_events_coalesced_total",
			Help: "Changes accepted for a library already waiting for its drop or recheck: no drop of their own.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_requests_rejected_total",
			Help: "Event requests refused, by reason: unauthorized (401), too_large (413), malformed (400), overloaded (503: --events.max-pending libraries wait for a drop).",
		}, []string{"reason"}),
		peer: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_peer_messages_total",
			Help: "Invalidations between replicas over Redis, by outcome: sent, publish_failed, applied (another replica's, applied here), invalid (a message that names no library).",
		}, []string{"outcome"}),
		resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_events_resyncs_total",
			Help: "Times this replica's subscription to other replicas' invalidations was established (at start and after each reconnection), each dropping the indexes it held since it may have missed some.",
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillsvc_events_pending",
			Help: "Libraries (and users' settings) waiting for a drop or its recheck (at most --events.max-pending).",
		}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_drops_total",
			Help: "Drops run for events, paced by --events.drop-rate and --events.drop-concurrency (each drops the library's index here, in the shared cache and the bucket, and tells the other replicas), by result: ok, error (tried again after 1s, 2s, 4s, 8s).",
		}, []string{"result"}),
		rechecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_rechecks_total",
			Help: "Of the drops, those run once more a second after the last event for them (so an index listed before the event and published after it is not served) or to retry a failed one, by result: ok, error.",
		}, []string{"result"}),
		sqsMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_sqs_messages_total",
			Help: "SQS messages received, by outcome: applied (applied, or holding nothing to apply, and deleted), malformed (no S3 event notification: deleted), retried (refused, the drop queue being full (--events.max-pending): received again after the visibility timeout).",
		}, []string{"outcome"}),
		sqsErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_sqs_errors_total",
			Help: "Failed SQS calls, by operation: receive, delete (per message not deleted, received and applied again), get_queue_attributes (the check at start).",
		}, []string{"operation"}),
	}
	for _, c := range []string{changeUserLibrary, changeSharedLibrary, changeTeamLibrary, changeSettings} {
		m.applied.WithLabelValues(c)
	}
	for _, r := range []string{ignoredEvent, ignoredBucket, ignoredUnrelated, ignoredOwnIndex, ignoredDuplicate} {
		m.ignored.WithLabelValues(r)
	}
	for _, r := range []string{rejectedUnauthorized, rejectedTooLarge, rejectedMalformed, rejectedOverloaded} {
		m.rejected.WithLabelValues(r)
	}
	for _, o := range []string{peerSent, peerPublishFailed, peerApplied, peerInvalid} {
		m.peer.WithLabelValues(o)
	}
	for _, o := range []string{sqsApplied, sqsMalformed, sqsRetried} {
		m.sqsMessages.WithLabelValues(o)
	}
	for _, o := range []string{sqsOpReceive, sqsOpDelete, sqsOpAttributes} {
		m.sqsErrors.WithLabelValues(o)
	}
	for _, r := range []string{"ok", "error"} {
		m.drops.WithLabelValues(r)
		m.rechecks.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.received, m.applied, m.ignored, m.coalesced, m.rejected, m.peer, m.resyncs, m.pending, m.drops, m.rechecks, m.sqsMessages, m.sqsErrors)
	}
	return m
}
