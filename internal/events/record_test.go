package events

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// minioBody is what MinIO's webhook target posts for one PUT (trimmed of
// identity fields): Records as S3 sends them, plus EventName and Key.
const minioBody = `{"EventName":"s3:ObjectCreated:Put","Key":"lib/alice/skills/a b/SKILL.md","Records":[{"eventVersion":"2.0","eventSource":"minio:s3","awsRegion":"","eventTime":"2026-01-01T00:00:00.000Z","eventName":"s3:ObjectCreated:Put","userIdentity":{"principalId":"skillsvc"},"requestParameters":{"sourceIPAddress":"127.0.0.1"},"responseElements":{"x-amz-request-id":"1"},"s3":{"s3SchemaVersion":"1.0","configurationId":"Config","bucket":{"name":"lib","ownerIdentity":{"principalId":"skillsvc"},"arn":"arn:aws:s3:::lib"},"object":{"key":"alice%2Fskills%2Fa+b%2FSKILL.md","size":42,"eTag":"abc","contentType":"text/markdown","sequencer":"1"}},"source":{"host":"127.0.0.1","port":"","userAgent":"aws-cli"}}]}`

// awsBody is an S3 notification as AWS delivers it to SQS or SNS: event
// names without "s3:", keys encoded like a form (a space as "+").
const awsBody = `{"Records":[
 {"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"lib"},"object":{"key":"_shared/skills/c%2B%2B/SKILL.md"}}},
 {"eventVersion":"2.1","eventSource":"aws:s3","eventName":"ObjectCreated:CompleteMultipartUpload","s3":{"bucket":{"name":"lib"},"object":{"key":"bob/skills/caf%C3%A9/SKILL.md"}}}
]}`

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		max     int
		want    []Record
		wantErr string
	}{
		{name: "minio webhook", body: minioBody, max: 10, want: []Record{{Event: "ObjectCreated:Put", Bucket: "lib", Key: "alice/skills/a b/SKILL.md"}}},
		{name: "aws", body: awsBody, max: 10, want: []Record{
			{Event: "ObjectRemoved:Delete", Bucket: "lib", Key: "_shared/skills/c++/SKILL.md"},
			{Event: "ObjectCreated:CompleteMultipartUpload", Bucket: "lib", Key: "bob/skills/café/SKILL.md"},
		}},
		{name: "s3 test event", body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"lib"}`, max: 10, want: []Record{}},
		{name: "not json", body: `Records`, max: 10, wantErr: "not an S3 event notification"},
		{name: "records not a list", body: `{"Records":{}}`, max: 10, wantErr: "not an S3 event notification"},
		{name: "too many records", body: awsBody, max: 1, wantErr: "2 records: at most 1"},
		{name: "no key", body: `{"Records":[{"eventName":"s3:ObjectCreated:Put","s3":{"bucket":{"name":"lib"},"object":{}}}]}`, max: 10, wantErr: "record 0: s3.object.key is missing"},
		{name: "bad escape", body: `{"Records":[{"eventName":"s3:ObjectCreated:Put","s3":{"object":{"key":"a%zz"}}}]}`, max: 10, wantErr: "record 0: s3.object.key is not URL-encoded"},
		{name: "not utf-8", body: `{"Records":[{"eventName":"s3:ObjectCreated:Put","s3":{"object":{"key":"a%FF"}}}]}`, max: 10, wantErr: "record 0: s3.object.key is not UTF-8"},
		{name: "key too long", body: `{"Records":[{"eventName":"s3:ObjectCreated:Put","s3":{"object":{"key":"` + strings.Repeat("a", 1025) + `"}}}]}`, max: 10, wantErr: "longer than 1024 bytes"},
		{name: "no event name", body: `{"Records":[{"eventName":"s3:","s3":{"object":{"key":"a"}}}]}`, max: 10, wantErr: "record 0: eventName is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.body), tc.max)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse = %v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse = %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}

// encode is the notification S3 would send for recs.
func encode(recs []Record) []byte {
	type object struct {
		Key string `json:"key"`
	}
	type bucket struct {
		Name string `json:"name"`
	}
	type s3 struct {
		Bucket bucket `json:"bucket"`
		Object object `json:"object"`
	}
	type record struct {
		EventName string `json:"eventName"`
		S3        s3     `json:"s3"`
	}
	n := struct {
		Records []record `json:"Records"`
	}{Records: []record{}}
	for _, r := range recs {
		n.Records = append(n.Records, record{EventName: "s3:" + r.Event, S3: s3{Bucket: bucket{r.Bucket}, Object: object{url.QueryEscape(r.Key)}}})
	}
	b, _ := json.Marshal(n)
	return b
}

// FuzzParse: whatever the body, Parse returns an error or at most max
// records, each naming an event and a key S3 could hold, and those records
// survive being sent again as S3 would encode them.
func FuzzParse(f *testing.F) {
	for _, b := range []string{minioBody, awsBody, `{"Records":[]}`, `{"Records":[{"eventName":"ObjectCreated:Put","s3":{"object":{"key":"a+b%2Fc"}}}]}`} {
		f.Add([]byte(b))
	}
	const max = 4
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := Parse(body, max)
		if err != nil {
			return
		}
		if len(recs) > max {
			t.Fatalf("%d records, max %d", len(recs), max)
		}
		for _, r := range recs {
			if r.Event == "" || r.Key == "" || len(r.Key) > maxKeyBytes || !utf8.ValidString(r.Key) {
				t.Fatalf("accepted %#v", r)
			}
		}
		again, err := Parse(encode(recs), max)
		if err != nil || !reflect.DeepEqual(again, recs) {
			t.Fatalf("re-encoded records parse as %#v, %v; want %#v", again, err, recs)
		}
	})
}

// FuzzParseMessage: an SQS message body is accepted only as an S3
// notification or one wrapped by SNS, and wrapping any body SNS's way
// parses it exactly as the body alone.
func FuzzParseMessage(f *testing.F) {
	for _, b := range []string{minioBody, awsBody, `{"Records":[]}`, `{"Type":"Notification","Message":"{\"Records\":[]}"}`, `{"Type":"SubscriptionConfirmation"}`} {
		f.Add([]byte(b))
	}
	const max = 4
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := ParseMessage(body, max)
		if err == nil && len(recs) > max {
			t.Fatalf("%d records, max %d", len(recs), max)
		}
		if !utf8.Valid(body) {
			return // SNS messages are text
		}
		env, _ := json.Marshal(map[string]string{"Type": "Notification", "Message": string(body)})
		wrapped, werr := ParseMessage(env, max)
		direct, derr := Parse(body, max)
		if (werr == nil) != (derr == nil) || !reflect.DeepEqual(wrapped, direct) {
			t.Fatalf("wrapped by SNS: %#v, %v; alone: %#v, %v", wrapped, werr, direct, derr)
		}
	})
}
