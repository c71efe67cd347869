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
	"github.com/skillsvc/skillsvc/internal/mcpserver/skillres"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// The skills extension (SEP-2640): https://github.com/modelcontextprotocol/ext-skills
const (
	extensionName = "io.modelcontextprotocol/skills"
	skillScheme   = skillres.Scheme
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
	Meta        map[string]any  `json:"_meta,omitempty"` // WithEntryMeta
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
	s.srv.AddResource(indexResource, s.readIndex)
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
	s.pageMeta(ctx, page.Skills, entries)
	return &listSkillsResult{
		ResultBase: libraryDigest(page),
		Cacheable:  s.cacheable(),
		ResultType: "complete",
		Skills:     entries,
		NextCursor: page.NextPageToken,
	}, nil
}

// libraryDigestKey names the library digest in a listing's _meta: the
// catalog's digest of the caller's whole merged view, the same on every
// page and in the gRPC and JSON listings, so a host holding a listing can
// tell in one field whether anything changed.
const libraryDigestKey = "dev.skillsvc/libraryDigest"

func libraryDigest(page skillview.Page) mcp.ResultBase {
	return mcp.ResultBase{Meta: mcp.Meta{libraryDigestKey: page.LibraryDigest}}
}

// listSkillsMethod is the gRPC method a listing page stands for in the
// logs and the audit trail.
const listSkillsMethod = "/skillsvc.v1.SkillsService/ListSkills"

// servedPage builds an item for each skill of one catalog page (token is
// the page token) in the catalog's order: one catalog read, whose skills
// carry their manifest and frontmatter. The catalog keeps only the skills
// the extension serves (skills/get says why one is not) before it cuts the
// page, so every page but the last is full. Its errors are JSON-RPC
// errors. The page is returned too, for its page token and library digest.
func servedPage[T any](ctx context.Context, s *identityServer, token string, build func(*skillview.Skill) *T) ([]*T, skillview.Page, error) {
	size := int32(s.h.cfg.SkillsPageSize)
	req := &skillsvcv1.ListSkillsRequest{PageSize: size, PageToken: token, View: skillsvcv1.SkillView_SKILL_VIEW_FULL}
	page, err := call(ctx, s.h, listSkillsMethod, req, func(id mounts.Caller) (skillview.Page, error) {
		return s.h.catalog.Page(ctx, id, skillview.ListOptions{ServedOverMCP: true}, size, token)
	})
	if err != nil {
		return nil, page, protocolError(err)
	}
	skilluse.Listed(ctx, page.Skills)
	items := make([]*T, len(page.Skills))
	for i := range page.Skills {
		items[i] = build(&page.Skills[i])
	}
	return items, page, nil
}

func (s *identityServer) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, a skill URI: skill://<skill-path>/SKILL.md")
	}
	dir, err := s.skillDir(p.URI)
	if err != nil {
		return nil, notFound(p.URI, "No skill is served at %.200s: %v", p.URI, err)
	}
	sk, err := s.servedSkill(ctx, dir)
	if ns, ok := errors.AsType[notServed](err); ok {
		return nil, invalidParams("The skill at %.200s is not served over this extension: %s (the skills tools and the gRPC catalog serve it)", p.URI, ns)
	}
	if code := status.Code(err); code == codes.NotFound || code == codes.InvalidArgument || errors.Is(err, errNotCanonical) {
		return nil, notFound(p.URI, "No skill is served at %.200s", p.URI)
	} else if err != nil {
		return nil, protocolError(err)
	}
	if id, err := callerOf(ctx); err == nil {
		s.h.usage.Activated(ctx, skilluse.MCP, id, skilluse.Of(*sk))
	}
	entry := s.entry(sk)
	entry.Meta = s.getMeta(ctx, sk)
	return &getSkillResult{Cacheable: s.cacheable(), ResultType: "complete", Skill: entry}, nil
}

var errNotCanonical = errors.New("not the skill's own path")

// notServed says why a skill the catalog serves is left out of the
// extension: hosts reject a whole listing over one entry that breaks the
// Agent Skills rules or the extension's limits.
type notServed string

func (e notServed) Error() string { return string(e) }

// skillDir maps skill://<skill-path>/SKILL.md to the skill folder's
// virtual path.
func (s *identityServer) skillDir(uri string) (string, error) {
	p, err := skillres.Parse(s.h.skillsMount, uri)
	if err != nil {
		return "", err
	}
	dir, ok := strings.CutSuffix(p, "/"+skillFileName)
	if !ok || dir == s.h.skillsMount {
		return "", skillres.Error("a skill URI is skill://<skill-path>/SKILL.md")
	}
	return dir, nil
}

// uriOf is the skill:// URI of a file under the skills mount.
func (s *identityServer) uriOf(virtual string) string {
	return skillres.URI(s.h.skillsMount, virtual)
}

// servedSkill returns the skill at folder dir, with its manifest and
// frontmatter, when the extension serves it (one catalog lookup);
// notServed says why not (skillmd.ExtensionProblem).
func (s *identityServer) servedSkill(ctx context.Context, dir string) (*skillview.Skill, error) {
	d, err := call(ctx, s.h, "/skillsvc.v1.SkillsService/GetSkill", &skillsvcv1.GetSkillRequest{Path: dir}, func(id mounts.Caller) (skillview.Detail, error) {
		return s.h.catalog.Get(ctx, id, dir)
	})
	if err != nil {
		return nil, err
	}
	// Get also answers to a skill's name; a URI must use the path.
	if d.Path != dir {
		return nil, errNotCanonical
	}
	if why := d.ExtensionProblem(); why != "" {
		return nil, notServed(why)
	}
	return &d.Skill, nil
}

// entry is a served skill's entry, from the catalog's manifest and
// frontmatter as written.
func (s *identityServer) entry(sk *skillview.Skill) *skillEntry {
	files := manifestFiles(sk)
	resources := make([]skillResource, len(files))
	for i, f := range files {
		resources[i] = skillResource{URI: s.uriOf(f.Path), Digest: "sha256:" + f.SHA256, Size: int64(f.Size)}
	}
	fm := json.RawMessage(sk.JSON)
	if len(fm) == 0 {
		fm = json.RawMessage("{}")
	}
	return &skillEntry{URI: s.uriOf(sk.Path + "/" + skillFileName), Frontmatter: fm, Resources: resources}
}

var errTooLarge = errors.New("file too large")

// download copies the file at virtual path p to w, refusing more than max
// bytes.
func (s *identityServer) download(ctx context.Context, p string, w io.Writer, max int64) (int64, error) {
	n, err := call(ctx, s.h, "/skillsvc.v1.FilesystemService/Download", &skillsvcv1.DownloadRequest{Path: p}, func(id mounts.Caller) (int64, error) {
		if err := server.RequirePath(p); err != nil {
			return 0, err
		}
		rc, _, err := s.h.fs.Download(ctx, id, p, 0, 0)
		if err != nil {
			return 0, err
		}
		defer rc.Close()
		return io.Copy(w, io.LimitReader(rc, max+1))
	})
	if err == nil && n > max {
		err = errTooLarge
	}
	return n, err
}

// readSkillFile answers resources/read of a skill:// URI with the file's
// bytes: text for UTF-8 text, a blob otherwise.
func (s *identityServer) readSkillFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	virtual, err := skillres.Parse(s.h.skillsMount, uri)
	if err != nil {
		return nil, notFound(uri, "%.200s: %v", uri, err)
	}
	var buf strings.Builder
	_, err = s.download(ctx, virtual, &buf, s.h.cfg.MaxResourceBytes)
	switch code := status.Code(err); {
	case errors.Is(err, errTooLarge):
		return nil, invalidParams("%s is larger than %d bytes", uri, s.h.cfg.MaxResourceBytes)
	case code == codes.NotFound, code == codes.InvalidArgument, code == codes.FailedPrecondition:
		return nil, notFound(uri, "No skill file is served at %s", uri)
	case err != nil:
		return nil, protocolError(err)
	}
	if id, err := callerOf(ctx); err == nil { // the skills tree names the skill, as for a Read of /skills
		s.h.fs.ReadDone(skilluse.WithSurface(ctx, skilluse.MCP), id, virtual)
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

// notFound is the Go SDK's resource-not-found error (mcp.ResourceNotFoundError:
// -32602 with data {"uri": …}, SEP-2164) with a message saying why: hosts
// tell a missing resource from a bad request by that data alone
// (Microsoft Agent Framework's MCPSkillsSource), and treat any other
// -32602 as a failure.
func notFound(uri, format string, args ...any) error {
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf(format, args...), Data: data}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// protocolError is a failure as a JSON-RPC error: err is a status error
// (call's), its code mapped by the error table's JSON-RPC column. The
// message is the table's, already fit for the caller (INTERNAL carries
// none).
func protocolError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
	}
	code := server.JSONRPCCode(st.Code())
	if code == jsonrpc.CodeInvalidParams {
		return &jsonrpc.Error{Code: code, Message: st.Message()}
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %s", st.Code(), st.Message())}
}
