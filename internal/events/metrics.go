package events

import "github.com/prometheus/client_golang/prometheus"

// Reasons a record is ignored.
const (
	ignoredEvent     = "event_type"   // not a write or delete (a read, a restore)
	ignoredBucket    = "other_bucket" // another bucket's
	ignoredUnrelated = "unrelated"    // an object of no library (a workspace file)
	ignoredOwnIndex  = "own_index"    // a library index skillsvc persisted itself
	ignoredDuplicate = "duplicate"    // a library an earlier record of the request dropped
)

// Reasons a request is refused.
const (
	rejectedUnauthorized = "unauthorized"
	rejectedTooLarge     = "too_large"
	rejectedMalformed    = "malformed"
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
	sqsRetried      = "retried"   // applying failed: left to be received again
	sqsOpReceive    = "receive"
	sqsOpDelete     = "delete"
	sqsOpAttributes = "get_queue_attributes"
)

type metrics struct {
	received prometheus.Counter
	applied  *prometheus.CounterVec // by change
	ignored  *prometheus.CounterVec // by reason
	failed   prometheus.Counter
	rejected *prometheus.CounterVec // requests, by reason
	peer     *prometheus.CounterVec // by outcome
	resyncs  prometheus.Counter
	rechecks *prometheus.CounterVec // by result

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
			Help: "S3 event records applied, by what they changed: user_library, team_library and shared_library (the library's index dropped here and in the shared cache, the other replicas told), settings (the user's cached settings dropped).",
		}, []string{"change"}),
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_ignored_total",
			Help: "S3 event records ignored, by reason: event_type (not a write or delete), other_bucket, unrelated (no library's object), own_index (an index skillsvc persisted), duplicate (a library the same request already dropped).",
		}, []string{"reason"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_events_failed_total",
			Help: "S3 event records whose invalidation failed (the shared cache or storage did not answer); the request is answered 503 so a sender with a queue retries.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_requests_rejected_total",
			Help: "Event requests refused, by reason: unauthorized (401), too_large (413), malformed (400).",
		}, []string{"reason"}),
		peer: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_peer_messages_total",
			Help: "Invalidations between replicas over Redis, by outcome: sent, publish_failed, applied (another replica's, applied here), invalid (a message that names no library).",
		}, []string{"outcome"}),
		resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillsvc_events_resyncs_total",
			Help: "Times this replica's subscription to other replicas' invalidations was established (at start and after each reconnection), each dropping the indexes it held since it may have missed some.",
		}),
		rechecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_rechecks_total",
			Help: "Changes applied once more a second after the last event for them (so an index listed before the event and published after it is not served), by result: ok, error.",
		}, []string{"result"}),
		sqsMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_sqs_messages_total",
			Help: "SQS messages received, by outcome: applied (applied, or holding nothing to apply, and deleted), malformed (no S3 event notification: deleted), retried (applying failed: received again after the visibility timeout).",
		}, []string{"outcome"}),
		sqsErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillsvc_events_sqs_errors_total",
			Help: "Failed SQS calls, by operation: receive, delete (per message not deleted, received and applied again), get_queue_attributes (the check at start).",
		}, []string{"operation"}),
	}
	for _, c := range []string{changeUserLibrary, changeSharedLibrary, changeSettings} {
		m.applied.WithLabelValues(c)
	}
	for _, r := range []string{ignoredEvent, ignoredBucket, ignoredUnrelated, ignoredOwnIndex, ignoredDuplicate} {
		m.ignored.WithLabelValues(r)
	}
	for _, r := range []string{rejectedUnauthorized, rejectedTooLarge, rejectedMalformed} {
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
	m.rechecks.WithLabelValues("ok")
	m.rechecks.WithLabelValues("error")
	if reg != nil {
		reg.MustRegister(m.received, m.applied, m.ignored, m.failed, m.rejected, m.peer, m.resyncs, m.rechecks, m.sqsMessages, m.sqsErrors)
	}
	return m
}
