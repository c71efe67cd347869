package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/skillmd"
)

// The skills extension (SEP-2640): https://github.com/modelcontextprotocol/ext-skills
const (
	extensionName = "io.modelcontextprotocol/skills"
	skillScheme   = "skill://"
	skillFileName = "SKILL.md"
)

// skillResource is one file of a skill with the digest of its bytes.
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// skillEntry is the extension's Skill: the frontmatter verbatim (the JSON
// text the catalog keeps, every number and date as written) and a complete
// manifest.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter json.RawMessage `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	mcp.Cacheable
	ResultType string        `json:"resultType"`
	Skills     []*skillEntry `json:"skills"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	mcp.Cacheable
	ResultType string      `json:"resultType"`
	Skill      *skillEntry `json:"skill"`
}

func (s *identityServer) addExtension() {
	// AddReceivingCustomMethod only fails for standard method names.
	must(mcp.AddReceivingCustomMethod(s.srv, "skills/list", s.listSkills))
	must(mcp.AddReceivingCustomMethod(s.srv, "skills/get", s.getSkill))
	must(mcp.AddReceivingCustomMethod(s.srv, directoryReadMethod, s.readDirectory))
	s.srv.AddResourceTemplate(skillTemplate, s.readSkillFile)
}

var skillTemplate = &mcp.ResourceTemplate{
	Name:        "skill-file",
	Title:       "Skill file",
	Description: "A file of a skill: skill://<category>/<skill>/SKILL.md, or references/, scripts/, assets/ files next to it.",
	URITemplate: skillScheme + "{+path}",
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func (s *identityServer) cacheable() mcp.Cacheable {
	return mcp.Cacheable{TTLMs: int(s.h.cfg.ListingTTL.Milliseconds()), CacheScope: "private"}
}

// listSkills pages through the catalog: the MCP cursor is ListSkills' page
// token, so it is opaque and bound to the listing like the gRPC one.
func (s *identityServer) listSkills(ctx context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	var token string
	if p != nil {
		token = p.Cursor
	}
	entries, page, err := servedPage(ctx, s, token, s.entry)
	if err != nil {
		return nil, err
	}
	return &listSkillsResult{
		ResultBase: libraryDigest(page),
		Cacheable:  s.cacheable(),
		ResultType: "complete",
		Skills:     entries,
		NextCursor: page.GetNextPageToken(),
	}, nil
}

// libraryDigestKey names the library digest in a listing's _meta: the
// catalog's digest of the caller's whole merged view, the same on every
// page and in the gRPC and JSON listings, so a host holding a listing can
// tell in one field whether anything changed.
const libraryDigestKey = "dev.skillsvc/libraryDigest"

func libraryDigest(page *skillsvcv1.ListSkillsResponse) mcp.ResultBase {
	return mcp.ResultBase{Meta: mcp.Meta{libraryDigestKey: page.GetLibraryDigest()}}
}

// servedPage builds an item for each skill of one ListSkills page (token is
// the page token) in the catalog's order: one catalog read, whose full view
// carries each skill's manifest and frontmatter. The skills the extension
// does not serve are left out (skills/get says why). Its errors are
// JSON-RPC errors. The page's reply is returned too, for its page token and
// library digest.
func servedPage[T any](ctx context.Context, s *identityServer, token string, build func(*skillsvcv1.SkillSummary) *T) ([]*T, *skillsvcv1.ListSkillsResponse, error) {
	resp, err := s.h.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{
		PageSize:  int32(s.h.cfg.SkillsPageSize),
		PageToken: token,
		View:      skillsvcv1.SkillView_SKILL_VIEW_FULL,
	})
	if err != nil {
		return nil, nil, protocolError(err)
	}
	items := make([]*T, 0, len(resp.GetSkills()))
	for _, sum := range resp.GetSkills() {
		if isServed(sum, sum.GetPath()) == nil {
			items = append(items, build(sum))
		}
	}
	return items, resp, nil
}

func (s *identityServer) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, a skill URI: skill://<skill-path>/SKILL.md")
	}
	dir, err := s.skillDir(p.URI)
	if err != nil {
		return nil, invalidParams("No skill is served at %.200s: %v", p.URI, err)
	}
	sk, err := s.servedSkill(ctx, dir)
	if ns, ok := errors.AsType[notServed](err); ok {
		return nil, invalidParams("The skill at %.200s is not served over this extension: %s (the skills tools and the gRPC catalog serve it)", p.URI, ns)
	}
	if code := status.Code(err); code == codes.NotFound || code == codes.InvalidArgument || errors.Is(err, errNotCanonical) {
		return nil, invalidParams("No skill is served at %.200s", p.URI)
	} else if err != nil {
		return nil, protocolError(err)
	}
	return &getSkillResult{Cacheable: s.cacheable(), ResultType: "complete", Skill: s.entry(sk)}, nil
}

var errNotCanonical = errors.New("not the skill's own path")

// notServed says why a skill the catalog serves is left out of the
// extension: hosts reject a whole listing over one entry that breaks the
// Agent Skills rules or the extension's limits.
type notServed string

func (e notServed) Error() string { return string(e) }

// followsRules checks what hosts check of an entry, by the Agent Skills
// rules and limits skillmd holds (the catalog serves skills that break
// them, with warnings), on the frontmatter as written: the URI's last
// segment (the folder) is the name, a valid skill name; the description
// fits; compatibility, if any, is text that fits; metadata, if any, maps
// strings to strings.
func followsRules(sk *skillsvcv1.SkillSummary, dir string) error {
	name, folder := sk.GetName(), path.Base(dir)
	var fm struct {
		Description   any
		Compatibility any
		Metadata      any
	}
	if err := json.Unmarshal([]byte(sk.GetFrontmatterJson()), &fm); err != nil {
		return notServed("its frontmatter is not available as written")
	}
	description, _ := fm.Description.(string)
	switch {
	case sk.GetDisplayName() != "":
		return notServed(fmt.Sprintf("its name %.80q is not a skill name (lowercase letters, digits and single hyphens)", sk.GetDisplayName()))
	case name != folder:
		return notServed(fmt.Sprintf("its name %.80q differs from its folder %.80q", name, folder))
	case utf8.RuneCountInString(name) > skillmd.MaxNameLen:
		return notServed(fmt.Sprintf("its name is longer than %d characters", skillmd.MaxNameLen))
	case description == "":
		return notServed("its description is not text")
	case utf8.RuneCountInString(description) > skillmd.MaxDescriptionLen:
		return notServed(fmt.Sprintf("its description is longer than %d characters", skillmd.MaxDescriptionLen))
	case fm.Compatibility != nil && !textWithin(fm.Compatibility, skillmd.MaxCompatibilityLen):
		return notServed(fmt.Sprintf("its compatibility is not text of 1 to %d characters", skillmd.MaxCompatibilityLen))
	case fm.Metadata != nil && !stringMap(fm.Metadata):
		return notServed("its metadata does not map strings to strings (quote numbers and booleans)")
	}
	return nil
}

func textWithin(v any, n int) bool {
	s, ok := v.(string)
	return ok && s != "" && utf8.RuneCountInString(s) <= n
}

func stringMap(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, e := range m {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// skillDir maps skill://<skill-path>/SKILL.md to the skill folder's
// virtual path.
func (s *identityServer) skillDir(uri string) (string, error) {
	p, err := parseSkillURI(s.h.skillsMount, uri)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutSuffix(p, "/"+skillFileName)
	if !ok || dir == s.h.skillsMount {
		return "", errURI("a skill URI is skill://<skill-path>/SKILL.md")
	}
	return dir, nil
}

// uriOf is the skill:// URI of a file under the skills mount.
func (s *identityServer) uriOf(virtual string) string {
	return skillURI(s.h.skillsMount, virtual)
}

// servedSkill returns the skill at folder dir, with its manifest and
// frontmatter, when the extension serves it (one catalog lookup);
// notServed says why not.
func (s *identityServer) servedSkill(ctx context.Context, dir string) (*skillsvcv1.SkillSummary, error) {
	got, err := s.h.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: dir})
	if err != nil {
		return nil, err
	}
	// GetSkill also answers to a skill's name; a URI must use the path.
	if got.GetSkill().GetPath() != dir {
		return nil, errNotCanonical
	}
	if err := isServed(got.GetSkill(), dir); err != nil {
		return nil, err
	}
	return got.GetSkill(), nil
}

// isServed checks that the skill at folder dir (its full view) follows the
// rules hosts check and the extension's per-skill limits.
func isServed(sk *skillsvcv1.SkillSummary, dir string) error {
	if err := followsRules(sk, dir); err != nil {
		return err
	}
	if m := sk.GetManifest(); m == nil || m.GetOverLimits() {
		return notServed(fmt.Sprintf("it is over the extension's limits of %d files and %d bytes a skill", skillmd.MaxSkillFiles, skillmd.MaxSkillBytes))
	}
	return nil
}

// entry is a served skill's entry, from the catalog's manifest and
// frontmatter as written.
func (s *identityServer) entry(sk *skillsvcv1.SkillSummary) *skillEntry {
	files := sk.GetManifest().GetFiles()
	resources := make([]skillResource, len(files))
	for i, f := range files {
		resources[i] = skillResource{URI: s.uriOf(f.GetPath()), Digest: "sha256:" + f.GetSha256(), Size: f.GetSize()}
	}
	fm := json.RawMessage(sk.GetFrontmatterJson())
	if len(fm) == 0 {
		fm = json.RawMessage("{}")
	}
	return &skillEntry{URI: s.uriOf(sk.GetPath() + "/" + skillFileName), Frontmatter: fm, Resources: resources}
}

var errTooLarge = errors.New("file too large")

// download copies the file at virtual path p to w, refusing more than max
// bytes.
func (s *identityServer) download(ctx context.Context, p string, w io.Writer, max int64) (int64, error) {
	stream, err := s.h.fs.Download(ctx, &skillsvcv1.DownloadRequest{Path: p})
	if err != nil {
		return 0, err
	}
	var n int64
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += int64(len(msg.GetData()))
		if n > max {
			return n, errTooLarge
		}
		w.Write(msg.GetData())
	}
}

// readSkillFile answers resources/read of a skill:// URI with the file's
// bytes: text for UTF-8 text, a blob otherwise.
func (s *identityServer) readSkillFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	virtual, err := parseSkillURI(s.h.skillsMount, uri)
	if err != nil {
		return nil, invalidParams("%.200s: %v", uri, err)
	}
	var buf strings.Builder
	_, err = s.download(ctx, virtual, &buf, s.h.cfg.MaxResourceBytes)
	switch code := status.Code(err); {
	case errors.Is(err, errTooLarge):
		return nil, invalidParams("%s is larger than %d bytes", uri, s.h.cfg.MaxResourceBytes)
	case code == codes.NotFound, code == codes.InvalidArgument, code == codes.FailedPrecondition:
		return nil, invalidParams("No skill file is served at %s", uri)
	case err != nil:
		return nil, protocolError(err)
	}
	content := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(virtual)}
	if data := buf.String(); isText(data) {
		content.Text = data
	} else {
		content.Blob = []byte(data)
		if strings.HasPrefix(content.MIMEType, "text/") {
			content.MIMEType = "application/octet-stream"
		}
	}
	return &mcp.ReadResourceResult{Cacheable: s.cacheable(), Contents: []*mcp.ResourceContents{content}}, nil
}

func isText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

func mimeType(name string) string {
	switch ext := path.Ext(name); ext {
	case ".md":
		return "text/markdown"
	case "":
		return "text/plain"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// protocolError maps a gRPC failure to a JSON-RPC error. The status message
// is the gRPC error table's, already fit for the caller (INTERNAL carries
// none).
func protocolError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.OutOfRange:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: st.Message()}
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %s", st.Code(), st.Message())}
	}
}
