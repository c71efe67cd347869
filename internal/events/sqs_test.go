package events_test

import (
	"crypto/rand"
	"encoding/json"
	"flag"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/events"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// s3Notification is an S3 event notification as AWS S3 sends it to a queue
// or topic: every field of a record, the key URL-encoded.
func s3Notification(bucket, event, encodedKey string) string {
	return `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"us-east-1",` +
		`"eventTime":"2026-11-25T14:00:00.000Z","eventName":"` + event + `",` +
		`"userIdentity":{"principalId":"AWS:AIDAEXAMPLE"},"requestParameters":{"sourceIPAddress":"203.0.113.7"},` +
		`"responseElements":{"x-amz-request-id":"C3D13FE58DE4C810","x-amz-id-2":"FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD"},` +
		`"s3":{"s3SchemaVersion":"1.0","configurationId":"skillsvc","bucket":{"name":"` + bucket + `",` +
		`"ownerIdentity":{"principalId":"A3NL1KOZZKExample"},"arn":"arn:aws:s3:::` + bucket + `"},` +
		`"object":{"key":"` + encodedKey + `","size":1024,"eTag":"d41d8cd98f00b204e9800998ecf8427e","sequencer":"0055AED6DCD90281E5"}}}]}`
}

// snsEnvelope wraps msg as SNS delivers it to a queue subscribed without
// raw message delivery.
func snsEnvelope(msg string) string {
	b, _ := json.Marshal(map[string]string{
		"Type": "Notification", "MessageId": "22f1f7a4-5e2b-5d4e-9a37-2b9d3e6f0a11",
		"TopicArn": "arn:aws:sns:us-east-1:123456789012:skills-events", "Subject": "Amazon S3 Notification",
		"Message": msg, "Timestamp": "2026-11-25T14:00:00.123Z", "SignatureVersion": "1", "Signature": "EXAMPLE==",
		"SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-example.pem",
		"UnsubscribeURL": "https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe",
	})
	return string(b)
}

// s3TestEvent is what S3 sends when a notification is configured.
const s3TestEvent = `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-11-25T14:00:00.000Z","Bucket":"lib","RequestId":"5582815E1AEA5ADF","HostId":"8cLeGAmw"}`

func TestParseMessage(t *testing.T) {
	direct := s3Notification("lib", "ObjectCreated:Put", "alice/skills/my+skill/SKILL.md")
	for _, tc := range []struct {
		name    string
		body    string
		want    []events.Record
		wantErr bool
	}{
		{"as S3 sends it", direct, []events.Record{{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/skills/my skill/SKILL.md"}}, false},
		{"wrapped by SNS", snsEnvelope(direct), []events.Record{{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/skills/my skill/SKILL.md"}}, false},
		{"S3's test event", s3TestEvent, []events.Record{}, false},
		{"S3's test event wrapped by SNS", snsEnvelope(s3TestEvent), []events.Record{}, false},
		{"SNS subscription confirmation", `{"Type":"SubscriptionConfirmation","Message":"You have chosen to subscribe","SubscribeURL":"https://sns.example/confirm"}`, nil, true},
		{"SNS notification without a message", `{"Type":"Notification"}`, nil, true},
		{"SNS notification of something else", snsEnvelope(`hello`), nil, true},
		{"not JSON", `Records`, nil, true},
		{"a record without a key", `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"lib"},"object":{}}}]}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := events.ParseMessage([]byte(tc.body), 10)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseMessage: %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr && (len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0])) {
				t.Errorf("ParseMessage = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := events.ParseMessage([]byte(snsEnvelope(direct)), 0); err == nil {
		t.Error("a record over max records in an SNS envelope was accepted")
	}
}

// sqsConfig is the events configuration with only the consumer of queue on.
func sqsConfig(srv *testserver.SQS, queue string) events.Config {
	var cfg events.Config
	cfg.RegisterFlagsWithPrefix("", flag.NewFlagSet("", flag.ContinueOnError))
	cfg.SQS.QueueURL, cfg.SQS.Endpoint, cfg.SQS.WaitTime = queue, srv.Endpoint, time.Second
	return cfg
}

// queueDepth is the messages in queue: waiting, and received but not yet
// deleted.
func queueDepth(t *testing.T, c *sqs.Client, queue string) (visible, inFlight int) {
	t.Helper()
	out, err := c.GetQueueAttributes(t.Context(), &sqs.GetQueueAttributesInput{QueueUrl: &queue, AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	inFlight, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, inFlight
}

// sqsReplica is one replica consuming the queue, telling the others over
// Redis.
type sqsReplica struct {
	cat *recorder
	reg *prometheus.Registry
}

func newSQSReplica(t *testing.T, srv *testserver.SQS, queue, redisAddr, channel string) sqsReplica {
	t.Helper()
	ccfg := cache.DefaultConfig()
	ccfg.Redis.Addrs = []string{redisAddr}
	red, err := cache.NewRedis(ccfg.Redis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { red.Close() })
	r := sqsReplica{cat: newRecorder(t), reg: prometheus.NewRegistry()}
	cfg := sqsConfig(srv, queue)
	// One library at a time, so that a message naming two is refused.
	cfg.MaxPending = 1
	newReceiver(t, cfg, r.cat, events.Options{Bucket: "lib", Topic: red.Topic(channel), SQS: srv.Client(), Registerer: r.reg})
	return r
}

// changes are what a replica invalidated and what it forgot.
func (r sqsReplica) changes() (invalidated, forgot []layout.Change) {
	r.cat.mu.Lock()
	defer r.cat.mu.Unlock()
	return append([]layout.Change(nil), r.cat.invalidated...), append([]layout.Change(nil), r.cat.forgot...)
}

// TestSQSConsumer: two replicas consume one queue of a real SQS-compatible
// server. A message as S3 sends it, and one as SNS wraps it, reach one
// replica each, which invalidates exactly the library the key names and
// tells the other over Redis, which forgets it; every message is deleted
// once applied (S3's test event and a malformed one too); a message naming
// more libraries than may wait for a drop (--events.max-pending) is left in
// flight, to be received again.
func TestSQSConsumer(t *testing.T) {
	srv := testserver.StartSQS(t)
	client := srv.Client()
	queue := srv.NewQueue(t)
	channel := "inv-" + rand.Text()
	redis := testserver.SharedRedis(t).Addr
	a := newSQSReplica(t, srv, queue, redis, channel)
	b := newSQSReplica(t, srv, queue, redis, channel)
	for _, r := range []sqsReplica{a, b} {
		within(t, 30*time.Second, "subscribed to the other replicas", func() bool {
			return counter(t, r.reg, "skillsvc_events_resyncs_total", "", "") >= 1
		})
	}
	send := func(body string) {
		t.Helper()
		if _, err := client.SendMessage(t.Context(), &sqs.SendMessageInput{QueueUrl: &queue, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	// Each change reaches both replicas: invalidated on one (again a second
	// later: the recheck), forgotten through Redis on the other; and no
	// library but those changed is touched.
	reached := func(want layout.Change, changed ...layout.Change) func() bool {
		return func() bool {
			ai, af := a.changes()
			bi, bf := b.changes()
			for _, ch := range append(append(append(ai, af...), bi...), bf...) {
				if !slices.Contains(changed, ch) {
					t.Fatalf("%+v invalidated or forgotten; only %+v changed", ch, changed)
				}
			}
			return slices.Contains(ai, want) && slices.Contains(bf, want) || slices.Contains(bi, want) && slices.Contains(af, want)
		}
	}
	// drained: neither replica has a library waiting for a drop or a
	// recheck.
	drained := func() bool {
		return counter(t, a.reg, "skillsvc_events_pending", "", "") == 0 && counter(t, b.reg, "skillsvc_events_pending", "", "") == 0
	}
	alice := layout.Change{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "alice"}}
	shared := layout.Change{Kind: layout.LibraryFile, Library: layout.LibraryRef{Shared: true}}
	bob := layout.Change{Kind: layout.LibraryFile, Library: layout.LibraryRef{User: "bob"}}

	send(s3Notification("lib", "ObjectCreated:Put", "alice/skills/my+skill/SKILL.md"))
	within(t, time.Minute, "a message as S3 sends it reached both replicas", reached(alice, alice))
	within(t, time.Minute, "alice's recheck done", drained)

	send(snsEnvelope(s3Notification("lib", "ObjectRemoved:Delete", "_shared/skills/lint/SKILL.md")))
	within(t, time.Minute, "a message as SNS wraps it reached both replicas", reached(shared, alice, shared))
	within(t, time.Minute, "the shared library's recheck done", drained)

	// Nothing to apply, or nothing that could ever be applied: deleted.
	send(s3TestEvent)
	send(`{"Records":[{"eventName":"ObjectCreated:Put"}]}`)
	within(t, time.Minute, "every message deleted", func() bool {
		visible, inFlight := queueDepth(t, client, queue)
		return visible == 0 && inFlight == 0 &&
			counter(t, a.reg, "skillsvc_events_sqs_messages_total", "outcome", "malformed")+
				counter(t, b.reg, "skillsvc_events_sqs_messages_total", "outcome", "malformed") == 1
	})
	if n := counter(t, a.reg, "skillsvc_events_sqs_messages_total", "outcome", "applied") +
		counter(t, b.reg, "skillsvc_events_sqs_messages_total", "outcome", "applied"); n != 3 {
		t.Errorf("%v messages applied and deleted, want 3 (two changes, the test event)", n)
	}

	// Two libraries where one may wait: the first is dropped, the message
	// stays, in flight until its visibility timeout, then received again.
	msg := `{"Records":[` + strings.TrimSuffix(strings.TrimPrefix(s3Notification("lib", "ObjectCreated:Put", "bob/skills/x/SKILL.md"), `{"Records":[`), `]}`) + `,` +
		strings.TrimSuffix(strings.TrimPrefix(s3Notification("lib", "ObjectCreated:Put", "carol/skills/x/SKILL.md"), `{"Records":[`), `]}`) + `]}`
	send(msg)
	within(t, time.Minute, "a message naming too many libraries left in flight", func() bool {
		_, inFlight := queueDepth(t, client, queue)
		return inFlight == 1 && counter(t, a.reg, "skillsvc_events_sqs_messages_total", "outcome", "retried")+
			counter(t, b.reg, "skillsvc_events_sqs_messages_total", "outcome", "retried") == 1
	})
	within(t, time.Minute, "bob's library dropped", reached(bob, alice, shared, bob))
}
