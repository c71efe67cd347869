package library

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// State says whether a version can be served.
type State string

// States, as the version records store them.
const (
	Published State = "published"
	Pending   State = "pending"
	Rejected  State = "rejected"
)

// Record is one version of a skill, stored at
// <root>skills/<name>/v/<hex>.json. Its files never change (they are its
// id); its state and review do, once, by a conditional write.
type Record struct {
	ID            string               `json:"id"` // "sha256:<hex>", skillmd.ManifestDigest of Files
	Name          string               `json:"name"`
	Category      string               `json:"category,omitempty"`
	Created       time.Time            `json:"created"`
	Author        string               `json:"author"`
	Message       string               `json:"message,omitempty"`
	State         State                `json:"state"`
	Files         []skillmd.FileDigest `json:"files"` // in path order
	TotalBytes    int64                `json:"total_bytes"`
	Reviewer      string               `json:"reviewer,omitempty"`
	ReviewTime    time.Time            `json:"review_time,omitzero"`
	ReviewComment string               `json:"review_comment,omitempty"`
}

// Refs are a skill's labels ("latest" among them), in one small object
// per skill, <root>skills/<name>/refs.json, changed by conditional writes.
type Refs struct {
	Labels map[string]string `json:"labels"` // label → version id
	// Ordered: every record of the skill has its marker (order.go).
	Ordered bool `json:"ordered,omitempty"`
}

// Latest is the label PublishSkill, RollbackSkill and an approval move.
const Latest = "latest"

// maxRecordBytes bounds what reading a record or refs object reads.
const maxRecordBytes = 1 << 20

var labelRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,62}$`)

// checkLabel accepts a label name.
func checkLabel(l string) error {
	if !labelRE.MatchString(l) {
		return fmt.Errorf("%w: label %q must be letters, digits, '.', '_' and '-', starting with a letter, at most 63", errkind.InvalidArgument, clip(l))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// hexOf returns the hex of a version id or id prefix ("sha256:" optional),
// or "" when v is not one.
func hexOf(v string) string {
	h := strings.TrimPrefix(v, "sha256:")
	if len(h) < 12 || len(h) > 64 {
		return ""
	}
	for _, c := range []byte(h) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return ""
		}
	}
	return h
}

// store reads and writes one library's records and refs.
type store struct {
	bucket objstore.Bucket
	root   string // the library's versions root
	max    int    // versions per skill
	log    *slog.Logger
}

func (s store) skillPrefix(name string) string    { return s.root + "skills/" + name + "/" }
func (s store) recordKey(name, hex string) string { return s.skillPrefix(name) + "v/" + hex + ".json" }
func (s store) refsKey(name string) string        { return s.skillPrefix(name) + "refs.json" }

// getJSON reads key into v and returns its ETag.
func (s store) getJSON(ctx context.Context, key string, v any) (string, error) {
	data, etag, err := s.getBytes(ctx, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return "", fmt.Errorf("library: %s: %v", key, err)
	}
	return etag, nil
}

// getBytes reads the record or refs object at key and its ETag.
func (s store) getBytes(ctx context.Context, key string) ([]byte, string, error) {
	rc, a, err := s.bucket.Get(ctx, key)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	if a.Size > maxRecordBytes {
		return nil, "", fmt.Errorf("library: %s is %d bytes", key, a.Size)
	}
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), maxRecordBytes+1))
	if err != nil {
		return nil, "", err
	}
	return data, a.ETag, nil
}

func (s store) putJSON(ctx context.Context, key string, v any, opts objstore.PutOptions) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), opts)
	return err
}

// record reads the version hex of name.
func (s store) record(ctx context.Context, name, hex string) (Record, string, error) {
	var r Record
	etag, err := s.getJSON(ctx, s.recordKey(name, hex), &r)
	if objstore.IsNotFound(err) {
		return Record{}, "", fmt.Errorf("%w: skill %s has no version sha256:%s", errkind.NotFound, name, clip(hex))
	}
	return r, etag, err
}

// refs reads name's refs; a skill without any has none (etag "").
func (s store) refs(ctx context.Context, name string) (Refs, string, error) {
	var r Refs
	etag, err := s.getJSON(ctx, s.refsKey(name), &r)
	if objstore.IsNotFound(err) {
		return Refs{Labels: map[string]string{}}, "", nil
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	return r, etag, err
}

// updateRefs applies change to name's refs with a conditional write,
// again after a lost race, so concurrent label moves never lose one.
func (s store) updateRefs(ctx context.Context, name string, change func(*Refs) error) (Refs, error) {
	var out Refs
	err := objstore.RetryConditional(ctx, 8, 20*time.Millisecond, func() error {
		r, etag, err := s.refs(ctx, name)
		if err != nil {
			return err
		}
		if err := change(&r); err != nil {
			return err
		}
		opts := objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""}
		if err := s.putJSON(ctx, s.refsKey(name), r, opts); err != nil {
			return err
		}
		out = r
		return nil
	})
	if objstore.LostRace(err) {
		return Refs{}, fmt.Errorf("%w: the labels of %s changed concurrently; try again", errkind.Aborted, name)
	}
	return out, err
}

// versionHexes lists the hex ids of name's versions, at most s.max.
func (s store) versionHexes(ctx context.Context, name, hexPrefix string) ([]string, error) {
	objs, err := s.versionObjects(ctx, name, hexPrefix)
	hexes := make([]string, len(objs))
	for i, o := range objs {
		hexes[i] = s.hexOf(name, o.Key)
	}
	return hexes, err
}

// versionObjects lists the record objects of name's versions, at most
// s.max.
func (s store) versionObjects(ctx context.Context, name, hexPrefix string) ([]objstore.Object, error) {
	var out []objstore.Object
	prefix := s.skillPrefix(name) + "v/"
	err := objstore.Walk(ctx, s.bucket, prefix+hexPrefix, func(o objstore.Object) error {
		if s.hexOf(name, o.Key) != "" {
			out = append(out, o)
		}
		if len(out) > s.max {
			return errTooMany
		}
		return nil
	})
	if err == errTooMany {
		return out[:s.max], nil
	}
	return out, err
}

// hexOf is the version id a record key of name's names, or "" when key is
// no record's.
func (s store) hexOf(name, key string) string {
	h, ok := strings.CutSuffix(strings.TrimPrefix(key, s.skillPrefix(name)+"v/"), ".json")
	if !ok || len(h) != 64 || hexOf(h) != h {
		return ""
	}
	return h
}

var errTooMany = fmt.Errorf("%w: too many versions", errkind.FailedPrecondition)

// resolve finds the version ref names (a label, an id or a unique prefix
// of at least 12 hex digits) among name's versions.
func (s store) resolve(ctx context.Context, name, ref string, refs Refs) (Record, string, error) {
	if ref == "" {
		return Record{}, "", fmt.Errorf("%w: version is required", errkind.InvalidArgument)
	}
	if id, ok := refs.Labels[ref]; ok {
		return s.record(ctx, name, strings.TrimPrefix(id, "sha256:"))
	}
	h := hexOf(ref)
	if h == "" {
		if checkLabel(ref) == nil {
			return Record{}, "", fmt.Errorf("%w: skill %s has no label %q", errkind.NotFound, name, ref)
		}
		return Record{}, "", fmt.Errorf("%w: version %q is neither a label nor a version id (sha256:<hex>, or at least 12 hex digits of one)", errkind.InvalidArgument, clip(ref))
	}
	if len(h) == 64 {
		return s.record(ctx, name, h)
	}
	hs, err := s.versionHexes(ctx, name, h)
	if err != nil {
		return Record{}, "", err
	}
	switch len(hs) {
	case 0:
		return Record{}, "", fmt.Errorf("%w: skill %s has no version %s…", errkind.NotFound, name, h)
	case 1:
		return s.record(ctx, name, hs[0])
	}
	return Record{}, "", fmt.Errorf("%w: version prefix %s is not unique for %s (%d versions); give more digits", errkind.InvalidArgument, h, name, len(hs))
}

// labelsOf lists the labels pointing at id, sorted.
func labelsOf(refs Refs, id string) []string {
	var out []string
	for l, v := range refs.Labels {
		if v == id {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
