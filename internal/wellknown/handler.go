package wellknown

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/gateway"
	"github.com/skillsvc/skillsvc/internal/requestid"
)

// Schema is the draft version the index declares.
const Schema = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// maxPages bounds the ListSkills calls of one index: pages of up to 1,000
// skills, or fewer where packing ends a page early.
const maxPages = 1000

// cacheControl: every document is the caller's own, and may change with
// the library, so a cache keeps it privately and asks again (with the
// index's ETag, a 304).
const cacheControl = "private, no-cache"

// vary names the headers a document depends on: who is calling.
const vary = "Authorization, X-Skillsvc-User, X-Skillsvc-Thread, X-Skillsvc-Ticket, X-Skillsvc-Teams, X-Skillsvc-Scope, X-Skillsvc-Harness, X-Skillsvc-Pin"

// Entry is one skill of the index, as the draft names its fields.
type Entry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

// Document is index.json.
type Document struct {
	Schema string  `json:"$schema"`
	Skills []Entry `json:"skills"`
}

// Handler serves Prefix.
type Handler struct {
	skills skillsvcv1.SkillsServiceClient
}

// New serves the well-known documents by calling the services over conn
// (server.InProcess in the binary).
func New(conn grpc.ClientConnInterface) *Handler {
	return &Handler{skills: skillsvcv1.NewSkillsServiceClient(conn)}
}

// ServeHTTP implements http.Handler for GET (and HEAD) under Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t, ok := Parse(r.URL.Path)
	if !ok {
		gateway.WriteError(w, r, status.Error(codes.NotFound, "no such document under "+Prefix+": index.json, <name>/SKILL.md or <name>.tar.gz"))
		return
	}
	ctx := metadata.NewOutgoingContext(r.Context(), gateway.Metadata(r))
	w.Header().Set("Cache-Control", cacheControl)
	w.Header().Set("Vary", vary)
	switch t.Kind {
	case Index:
		h.index(ctx, w, r)
	case SkillMD:
		h.skillMD(ctx, w, r, t.Name)
	case Archive:
		h.archive(ctx, w, r, t.Name)
	}
}

// index lists the caller's skills as ListSkills does (its scope, its
// disabled skills left out), keeping those the draft can describe: a name
// it allows, the same name in SKILL.md (no display name), and an artifact
// (not over the limits). The ETag is the body's digest.
func (h *Handler) index(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	doc, reqID, err := h.document(ctx)
	setRequestID(w, reqID)
	if err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	sum := sha256.Sum256(body.Bytes())
	serve(w, r, `"sha256:`+hex.EncodeToString(sum[:])+`"`, "application/json", body.Bytes())
}

// document is the caller's index, from ListSkills pages.
func (h *Handler) document(ctx context.Context) (Document, string, error) {
	doc := Document{Schema: Schema, Skills: []Entry{}}
	var reqID string
	token := ""
	for range maxPages {
		var hdr metadata.MD
		resp, err := h.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{PageSize: 1000, PageToken: token, IncludeArtifacts: true}, grpc.Header(&hdr))
		if reqID == "" {
			reqID = first(hdr, requestid.Key)
		}
		if err != nil {
			return Document{}, reqID, err
		}
		for _, s := range resp.GetSkills() {
			if e, ok := entry(s); ok {
				doc.Skills = append(doc.Skills, e)
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			return doc, reqID, nil
		}
	}
	return Document{}, reqID, status.Errorf(codes.ResourceExhausted, "the index takes more than %d pages", maxPages)
}

// entry is s as the index lists it, if the draft can describe it.
func entry(s *skillsvcv1.SkillSummary) (Entry, bool) {
	a := s.GetArtifact()
	if a == nil || !ValidName(s.GetName()) || s.GetDisplayName() != "" || s.GetDescription() == "" {
		return Entry{}, false
	}
	e := Entry{Name: s.GetName(), Type: a.GetType(), Description: fitUTF16(s.GetDescription(), maxDescription), Digest: a.GetDigest()}
	switch a.GetType() {
	case "skill-md":
		e.URL = Target{Kind: SkillMD, Name: e.Name}.Path()
	case "archive":
		e.URL = Target{Kind: Archive, Name: e.Name}.Path()
	default:
		return Entry{}, false
	}
	return e, true
}

// maxDescription is the draft's longest description. Clients count it as
// JavaScript does, in UTF-16 code units, where a listing's 1,024
// characters can be more.
const maxDescription = 1024

// fitUTF16 returns s if it is at most n UTF-16 code units, else its
// longest prefix of whole characters that is, less one unit, and "…".
func fitUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		if units += utf16.RuneLen(r); units > n {
			cut, u := 0, 0
			for j, r := range s[:i] {
				if u += utf16.RuneLen(r); u > n-1 {
					break
				}
				cut = j + utf8.RuneLen(r)
			}
			return s[:cut] + "…"
		}
	}
	return s
}

// skillMD serves the skill's SKILL.md as stored (GetSkill's raw).
func (h *Handler) skillMD(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) {
	var hdr metadata.MD
	resp, err := h.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: name}, grpc.Header(&hdr))
	setRequestID(w, first(hdr, requestid.Key))
	if err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	raw := []byte(resp.GetRaw())
	sum := sha256.Sum256(raw)
	serve(w, r, `"sha256:`+hex.EncodeToString(sum[:])+`"`, "text/markdown; charset=utf-8", raw)
}

// archive streams the skill's root-layout archive (ExportSkill with
// ARCHIVE_LAYOUT_ROOT). An error before the first chunk is the JSON API's
// error; one after it aborts the response, so a client never takes a cut
// archive for a whole one.
func (h *Handler) archive(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := h.skills.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: name, Layout: skillsvcv1.ArchiveLayout_ARCHIVE_LAYOUT_ROOT})
	if err != nil {
		gateway.WriteError(w, r, err)
		return
	}
	msg, err := stream.Recv()
	if hdr, herr := stream.Header(); herr == nil {
		setRequestID(w, first(hdr, requestid.Key))
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = status.Error(codes.Internal, "internal error: an empty archive")
		}
		gateway.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	for {
		if _, err := w.Write(msg.GetData()); err != nil {
			return
		}
		if msg, err = stream.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				panic(http.ErrAbortHandler)
			}
			return
		}
	}
}

// serve writes body with its ETag, or 304 Not Modified when the request's
// If-None-Match names it.
func serve(w http.ResponseWriter, r *http.Request, etag, contentType string, body []byte) {
	w.Header().Set("ETag", etag)
	if matches(r.Header.Values("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// matches reports whether an If-None-Match list names etag (weakly, as
// RFC 9110 compares for GET), or is "*".
func matches(values []string, etag string) bool {
	for _, v := range values {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}

func setRequestID(w http.ResponseWriter, id string) {
	if id != "" {
		w.Header().Set("X-Request-Id", id)
	}
}

func first(md metadata.MD, key string) string {
	if vs := md.Get(key); len(vs) > 0 {
		return vs[0]
	}
	return ""
}
