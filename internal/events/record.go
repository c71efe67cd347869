package events

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Record is one object change from an S3 event notification.
type Record struct {
	// Event is the event name without the "s3:" MinIO puts before it
	// (AWS S3 does not): "ObjectCreated:Put", "ObjectRemoved:Delete".
	Event  string
	Bucket string
	Key    string // decoded
}

// maxKeyBytes is S3's limit on an object key.
const maxKeyBytes = 1024

// changes reports whether the event may change a listing: an object
// written, deleted or expired. Reads, restores, replication and the
// others do not.
func (r Record) changes() bool {
	for _, p := range []string{"ObjectCreated:", "ObjectRemoved:", "LifecycleExpiration:"} {
		if strings.HasPrefix(r.Event, p) {
			return true
		}
	}
	return false
}

// notification is the S3 event message: MinIO's webhook body (which adds
// EventName and Key beside Records), the message of an SQS queue or SNS
// topic S3 publishes to, and S3's test event (no Records).
type notification struct {
	Records []struct {
		EventName string `json:"eventName"`
		S3        struct {
			Bucket struct {
				Name string `json:"name"`
			} `json:"bucket"`
			Object struct {
				Key string `json:"key"`
			} `json:"object"`
		} `json:"s3"`
	} `json:"Records"`
}

// Parse reads an S3 event notification of at most maxRecords records.
// Object keys arrive URL-encoded (a space as "+"), as S3 and MinIO both send
// them. Any malformed record fails the whole message, naming the record.
func Parse(body []byte, maxRecords int) ([]Record, error) {
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("not an S3 event notification: %w", err)
	}
	if len(n.Records) > maxRecords {
		return nil, fmt.Errorf("%d records: at most %d are accepted in one request", len(n.Records), maxRecords)
	}
	out := make([]Record, 0, len(n.Records))
	for i, r := range n.Records {
		event := strings.TrimPrefix(r.EventName, "s3:")
		key, err := url.QueryUnescape(r.S3.Object.Key)
		switch {
		case err != nil:
			return nil, fmt.Errorf("record %d: s3.object.key is not URL-encoded: %w", i, err)
		case key == "":
			return nil, fmt.Errorf("record %d: s3.object.key is missing", i)
		case len(key) > maxKeyBytes:
			return nil, fmt.Errorf("record %d: s3.object.key is longer than %d bytes", i, maxKeyBytes)
		case !utf8.ValidString(key):
			return nil, fmt.Errorf("record %d: s3.object.key is not UTF-8", i)
		case event == "":
			return nil, fmt.Errorf("record %d: eventName is missing", i)
		}
		out = append(out, Record{Event: event, Bucket: r.S3.Bucket.Name, Key: key})
	}
	return out, nil
}
