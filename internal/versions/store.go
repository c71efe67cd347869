package versions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/layout"
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
//
// A proposal (a non-admin's pending publish, under review) is a Record
// too, kept apart at <root>skills/<name>/p/<hex>.json: its ID is the
// proposal's own (ProposalID: the author's user ID and the content),
// Content the manifest digest, so two authors' proposals of the same
// files share no message, state or review, and none is a version until
// an admin approves it.
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
	// Proposer is a proposal's author by verified user ID (mounts.Caller),
	// who alone (and admins) sees it while it is not published.
	Proposer string `json:"proposer,omitempty"`
	// Content is a proposal's manifest digest; "" for a version, whose ID
	// is it.
	Content string `json:"content,omitempty"`
	// Problems are the warnings its publish found (coexistence among
	// them), as the check saw the library then: a reviewer weighs them.
	Problems []Warning `json:"problems,omitempty"`
	// Signatures are the signatures of its manifest digest attached to it
	// (AttachSignature), each verified when attached; one per key.
	Signatures []Signature `json:"signatures,omitempty"`
	// ScanVerdict is the scan's verdict on its files ("clean", "low",
	// "medium", "high"); "" until a scan has run (provenance says
	// "unscanned").
	ScanVerdict string `json:"scan_verdict,omitempty"`
}

// Signature is a Sigstore bundle signing a version's manifest digest, with
// the public key it verified with.
type Signature struct {
	KeyID     string    `json:"key_id"`
	KeyName   string    `json:"key_name,omitempty"` // its --library.signing-keys name, when attached
	Bundle    string    `json:"bundle"`             // the bundle's JSON
	PublicKey string    `json:"public_key"`         // PEM
	By        string    `json:"by"`
	Time      time.Time `json:"time"`
}

// MaxSignatures bounds the signatures one record keeps.
const MaxSignatures = 8

// WithSignature adds sig to sigs, replacing one by the same key, keeping
// at most MaxSignatures (the newest).
func WithSignature(sigs []Signature, sig Signature) []Signature {
	sigs = slices.DeleteFunc(slices.Clone(sigs), func(s Signature) bool { return s.KeyID == sig.KeyID })
	sigs = append(sigs, sig)
	if n := len(sigs) - MaxSignatures; n > 0 {
		sigs = sigs[n:]
	}
	return sigs
}

// Warning is a publish's problem as a record keeps it.
type Warning struct {
	File    string `json:"file,omitempty"`
	Field   string `json:"field,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Value   string `json:"value,omitempty"`
	Message string `json:"message"`
}

// maxRecordWarnings bounds the warnings a record keeps.
const maxRecordWarnings = 32

// WarningsOf is what a record keeps of a publish's problems: its warnings,
// at most maxRecordWarnings.
func WarningsOf(ps []skillmd.Problem) []Warning {
	var out []Warning
	for _, p := range ps {
		if p.Severity == skillmd.SeverityWarning && len(out) < maxRecordWarnings {
			out = append(out, Warning{File: p.File, Field: p.Field, Rule: p.Rule, Value: p.Value, Message: p.Message})
		}
	}
	return out
}

// Proposal reports whether r is a proposal (stored under p/).
func (r Record) Proposal() bool { return r.Content != "" }

// ProposalID names the proposal of the files content by the user: one per
// author and content, unlike any version's ID.
func ProposalID(user, content string) string {
	sum := sha256.Sum256([]byte("skillsvc proposal\x00" + user + "\x00" + content))
	return "sha256:" + hex.EncodeToString(sum[:])
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

// maxRecordBytes bounds every record and refs object, as written
// (putJSON) and as read (getBytes).
const maxRecordBytes = 1 << 20

// recordReserve is the room a new record keeps for what a review adds
// later (reviewer, time, a comment of MaxMessageRunes runes of at most six
// bytes each, escaped), so a review never pushes it past maxRecordBytes.
// MaxMessageRunes bounds an author's note and a review comment.
const MaxMessageRunes = 1024

const recordReserve = 4<<10 + 6*MaxMessageRunes

// encodeJSON is v as stored: HTML characters unescaped ('<' one byte, not
// six), though the bound holds whatever the encoding.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// CheckNewRecord refuses a version record that would not fit the bound
// with room for its review.
func CheckNewRecord(rec Record) error {
	data, err := encodeJSON(rec)
	if err != nil {
		return err
	}
	if n := len(data); n > maxRecordBytes-recordReserve {
		return fmt.Errorf("%w: the version record of %s would be %d bytes (its %d file paths and message); a stored record is at most %d bytes, %d of them kept for its review", errkind.InvalidArgument, rec.Name, n, len(rec.Files), maxRecordBytes, recordReserve)
	}
	return nil
}

// unreadableError is a stored record or refs object that cannot be read:
// over maxRecordBytes, or not JSON (written by hand, or before writes were
// bounded). Listings, garbage collection and bulk reviews skip it and name
// its key in the log; a call that needs it fails FAILED_PRECONDITION until
// an admin deletes it (AdminService.DeleteSkillVersions).
type unreadableError struct {
	key, why string
}

func (e *unreadableError) Error() string {
	return fmt.Sprintf("failed precondition: the stored record %s is unreadable (%s); an admin deletes it with DeleteSkillVersions", path.Base(e.key), e.why)
}

func (e *unreadableError) Unwrap() error { return errkind.FailedPrecondition }

// IsUnreadable reports whether err is an unreadable record's, and its key.
func IsUnreadable(err error) (string, bool) {
	var u *unreadableError
	if errors.As(err, &u) {
		return u.key, true
	}
	return "", false
}

var labelRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,62}$`)

// CheckLabel accepts a label name.
func CheckLabel(l string) error {
	if !labelRE.MatchString(l) {
		return fmt.Errorf("%w: label %q must be letters, digits, '.', '_' and '-', starting with a letter, at most 63", errkind.InvalidArgument, Clip(l))
	}
	return nil
}

func Clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// HexOf returns the hex of a version id or id prefix ("sha256:" optional),
// or "" when v is not one.
func HexOf(v string) string {
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

// Store reads and writes one library's records and refs.
type Store struct {
	Bucket objstore.Bucket
	Root   string       // the library's versions root
	Max    int          // versions per skill
	Log    *slog.Logger // names unreadable records' keys
	// maxProposals bounds the proposals per skill listed.
	MaxProposals int
}

func (s Store) SkillPrefix(name string) string    { return layout.VersionsOf(s.Root).Skill(name) }
func (s Store) RecordKey(name, hex string) string { return layout.VersionsOf(s.Root).Record(name, hex) }
func (s Store) RefsKey(name string) string        { return layout.VersionsOf(s.Root).Refs(name) }
func (s Store) ProposalKey(name, hex string) string {
	return layout.VersionsOf(s.Root).Proposal(name, hex)
}

// KeyOf is where rec is stored.
func (s Store) KeyOf(rec Record) string {
	if rec.Proposal() {
		return s.ProposalKey(rec.Name, strings.TrimPrefix(rec.ID, "sha256:"))
	}
	return s.RecordKey(rec.Name, strings.TrimPrefix(rec.ID, "sha256:"))
}

// unreadable logs an unreadable record's key; err is returned.
func (s Store) unreadable(err error) error {
	if key, ok := IsUnreadable(err); ok && s.Log != nil {
		s.Log.Warn("library: unreadable record skipped or refused; delete it with AdminService.DeleteSkillVersions", "key", key, "err", err)
	}
	return err
}

// GetJSON reads key into v and returns its ETag.
func (s Store) GetJSON(ctx context.Context, key string, v any) (string, error) {
	data, etag, err := s.getBytes(ctx, key)
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return "", s.unreadable(&unreadableError{key: key, why: err.Error()})
	}
	return etag, nil
}

// getBytes reads the record or refs object at key and its ETag.
func (s Store) getBytes(ctx context.Context, key string) ([]byte, string, error) {
	rc, a, err := s.Bucket.Get(ctx, key)
	if err != nil {
		return nil, "", err
	}
	defer rc.Close()
	if a.Size > maxRecordBytes {
		return nil, "", s.unreadable(&unreadableError{key: key, why: fmt.Sprintf("%d bytes, over the %d-byte limit", a.Size, maxRecordBytes)})
	}
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), maxRecordBytes+1))
	if err != nil {
		return nil, "", err
	}
	if len(data) > maxRecordBytes {
		return nil, "", s.unreadable(&unreadableError{key: key, why: fmt.Sprintf("over the %d-byte limit", maxRecordBytes)})
	}
	return data, a.ETag, nil
}

// PutJSON writes v at key, refused (INVALID_ARGUMENT) past maxRecordBytes:
// what is written can always be read back.
func (s Store) PutJSON(ctx context.Context, key string, v any, opts objstore.PutOptions) error {
	data, err := encodeJSON(v)
	if err != nil {
		return err
	}
	if len(data) > maxRecordBytes {
		return fmt.Errorf("%w: the record would be %d bytes; a stored record is at most %d bytes", errkind.InvalidArgument, len(data), maxRecordBytes)
	}
	_, err = s.Bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), opts)
	return err
}

// Record reads the version hex of name, else its proposal hex.
func (s Store) Record(ctx context.Context, name, hex string) (Record, string, error) {
	var r Record
	etag, err := s.GetJSON(ctx, s.RecordKey(name, hex), &r)
	if objstore.IsNotFound(err) {
		r = Record{}
		etag, err = s.GetJSON(ctx, s.ProposalKey(name, hex), &r)
	}
	if objstore.IsNotFound(err) {
		return Record{}, "", fmt.Errorf("%w: skill %s has no version sha256:%s", errkind.NotFound, name, Clip(hex))
	}
	return r, etag, err
}

// RecordAt reads the record at key.
func (s Store) RecordAt(ctx context.Context, key string) (Record, string, error) {
	var r Record
	etag, err := s.GetJSON(ctx, key, &r)
	if objstore.IsNotFound(err) {
		return Record{}, "", fmt.Errorf("%w: %s is gone", errkind.NotFound, path.Base(key))
	}
	return r, etag, err
}

// ProposalObjects lists the record objects of name's proposals (pending
// or rejected), at most s.MaxProposals.
func (s Store) ProposalObjects(ctx context.Context, name, hexPrefix string) ([]objstore.Object, error) {
	var out []objstore.Object
	prefix := layout.VersionsOf(s.Root).Proposals(name)
	err := objstore.Walk(ctx, s.Bucket, prefix+hexPrefix, func(o objstore.Object) error {
		if h, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix), ".json"); ok && len(h) == 64 && HexOf(h) == h {
			out = append(out, o)
		}
		if len(out) > s.MaxProposals {
			return errTooMany
		}
		return nil
	})
	if err == errTooMany {
		return out[:s.MaxProposals], nil
	}
	return out, err
}

// Refs reads name's refs; a skill without any has none (etag "").
func (s Store) Refs(ctx context.Context, name string) (Refs, string, error) {
	var r Refs
	etag, err := s.GetJSON(ctx, s.RefsKey(name), &r)
	if objstore.IsNotFound(err) {
		return Refs{Labels: map[string]string{}}, "", nil
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	return r, etag, err
}

// UpdateRefs applies change to name's refs with a conditional write,
// again after a lost race, so concurrent label moves never lose one.
func (s Store) UpdateRefs(ctx context.Context, name string, change func(*Refs) error) (Refs, error) {
	var out Refs
	err := objstore.RetryConditional(ctx, 8, 20*time.Millisecond, func() error {
		r, etag, err := s.Refs(ctx, name)
		if err != nil {
			return err
		}
		if err := change(&r); err != nil {
			return err
		}
		opts := objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""}
		if err := s.PutJSON(ctx, s.RefsKey(name), r, opts); err != nil {
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

// VersionHexes lists the hex ids of name's versions, at most s.Max.
func (s Store) VersionHexes(ctx context.Context, name, hexPrefix string) ([]string, error) {
	objs, err := s.VersionObjects(ctx, name, hexPrefix)
	hexes := make([]string, len(objs))
	for i, o := range objs {
		hexes[i] = s.HexOf(name, o.Key)
	}
	return hexes, err
}

// VersionObjects lists the record objects of name's versions, at most
// s.Max.
func (s Store) VersionObjects(ctx context.Context, name, hexPrefix string) ([]objstore.Object, error) {
	var out []objstore.Object
	prefix := layout.VersionsOf(s.Root).Records(name)
	err := objstore.Walk(ctx, s.Bucket, prefix+hexPrefix, func(o objstore.Object) error {
		if s.HexOf(name, o.Key) != "" {
			out = append(out, o)
		}
		if len(out) > s.Max {
			return errTooMany
		}
		return nil
	})
	if err == errTooMany {
		return out[:s.Max], nil
	}
	return out, err
}

// HexOf is the version id a record key of name's names, or "" when key is
// no record's.
func (s Store) HexOf(name, key string) string {
	h, ok := strings.CutSuffix(strings.TrimPrefix(key, layout.VersionsOf(s.Root).Records(name)), ".json")
	if !ok || len(h) != 64 || HexOf(h) != h {
		return ""
	}
	return h
}

var errTooMany = fmt.Errorf("%w: too many versions", errkind.FailedPrecondition)

// Resolve finds the version ref names (a label, an id or a unique prefix
// of at least 12 hex digits) among name's versions.
func (s Store) Resolve(ctx context.Context, name, ref string, refs Refs) (Record, string, error) {
	if ref == "" {
		return Record{}, "", fmt.Errorf("%w: version is required", errkind.InvalidArgument)
	}
	if id, ok := refs.Labels[ref]; ok {
		return s.Record(ctx, name, strings.TrimPrefix(id, "sha256:"))
	}
	h := HexOf(ref)
	if h == "" {
		if CheckLabel(ref) == nil {
			return Record{}, "", fmt.Errorf("%w: skill %s has no label %q", errkind.NotFound, name, ref)
		}
		return Record{}, "", fmt.Errorf("%w: version %q is neither a label nor a version id (sha256:<hex>, or at least 12 hex digits of one)", errkind.InvalidArgument, Clip(ref))
	}
	if len(h) == 64 {
		return s.Record(ctx, name, h)
	}
	hs, err := s.VersionHexes(ctx, name, h)
	if err != nil {
		return Record{}, "", err
	}
	props, err := s.ProposalObjects(ctx, name, h)
	if err != nil {
		return Record{}, "", err
	}
	for _, o := range props {
		hs = append(hs, strings.TrimSuffix(path.Base(o.Key), ".json"))
	}
	switch len(hs) {
	case 0:
		return Record{}, "", fmt.Errorf("%w: skill %s has no version %s…", errkind.NotFound, name, h)
	case 1:
		return s.Record(ctx, name, hs[0])
	}
	return Record{}, "", fmt.Errorf("%w: version prefix %s is not unique for %s (%d versions); give more digits", errkind.InvalidArgument, h, name, len(hs))
}

// LabelsOf lists the labels pointing at id, sorted.
func LabelsOf(refs Refs, id string) []string {
	var out []string
	for l, v := range refs.Labels {
		if v == id {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
