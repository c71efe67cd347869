package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
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

	// Skills whose manifests one skills/list page builds at once.
	listConcurrency = 8
)

// skillResource is one file of a skill with the digest of its bytes.
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// skillEntry is the extension's Skill: the frontmatter verbatim and a
// complete manifest, or "dynamic".
type skillEntry struct {
	URI         string         `json:"uri"`
	Frontmatter map[string]any `json:"frontmatter"`
	Resources   any            `json:"resources"`
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

// digest is a file's sha256 and size, cached by caller, path and ETag.
type digest struct {
	sum  string
	size int64
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
	entries, next, err := servedPage(ctx, s, token, s.entry)
	if err != nil {
		return nil, err
	}
	return &listSkillsResult{
		Cacheable:  s.cacheable(),
		ResultType: "complete",
		Skills:     entries,
		NextCursor: next,
	}, nil
}

// servedPage builds an item for each skill of one ListSkills page (token is
// the page token), a few at a time, in the catalog's order; the skills the
// extension does not serve are left out (skills/get says why). Its errors
// are JSON-RPC errors.
func servedPage[T any](ctx context.Context, s *identityServer, token string, build func(context.Context, string) (*T, error)) ([]*T, string, error) {
	resp, err := s.h.skills.ListSkills(ctx, &skillsvcv1.ListSkillsRequest{
		PageSize:  int32(s.h.cfg.SkillsPageSize),
		PageToken: token,
	})
	if err != nil {
		return nil, "", protocolError(err)
	}
	items := make([]*T, len(resp.GetSkills()))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listConcurrency)
	for i, sum := range resp.GetSkills() {
		g.Go(func() error {
			item, err := build(gctx, sum.GetPath())
			if _, ok := errors.AsType[notServed](err); ok {
				return nil
			}
			items[i] = item
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, "", protocolError(err)
	}
	return slices.DeleteFunc(items, func(item *T) bool { return item == nil }), resp.GetNextPageToken(), nil
}

func (s *identityServer) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("skills/get needs params.uri, a skill URI: skill://<skill-path>/SKILL.md")
	}
	dir, err := s.skillDir(p.URI)
	if err != nil {
		return nil, invalidParams("No skill is served at %.200s: %v", p.URI, err)
	}
	e, err := s.entry(ctx, dir)
	if ns, ok := errors.AsType[notServed](err); ok {
		return nil, invalidParams("The skill at %.200s is not served over this extension: %s (the skills tools and the gRPC catalog serve it)", p.URI, ns)
	}
	if code := status.Code(err); code == codes.NotFound || code == codes.InvalidArgument || errors.Is(err, errNotCanonical) {
		return nil, invalidParams("No skill is served at %.200s", p.URI)
	} else if err != nil {
		return nil, protocolError(err)
	}
	return &getSkillResult{Cacheable: s.cacheable(), ResultType: "complete", Skill: e}, nil
}

var errNotCanonical = errors.New("not the skill's own path")

// notServed says why a skill the catalog serves is left out of the
// extension: hosts reject a whole listing over one entry that breaks the
// Agent Skills rules or the extension's limits.
type notServed string

func (e notServed) Error() string { return string(e) }

// followsRules checks what hosts check of an entry, by the Agent Skills
// limits skillmd holds (the catalog serves skills that break them, with
// warnings): the URI's last segment (the folder) is the frontmatter name,
// a valid skill name, and the description fits.
func followsRules(sk *skillsvcv1.SkillSummary, dir string) error {
	name, folder := sk.GetName(), path.Base(dir)
	switch {
	case sk.GetDisplayName() != "":
		return notServed(fmt.Sprintf("its name %.80q is not a skill name (lowercase letters, digits and single hyphens)", sk.GetDisplayName()))
	case name != folder:
		return notServed(fmt.Sprintf("its name %.80q differs from its folder %.80q", name, folder))
	case utf8.RuneCountInString(name) > skillmd.MaxNameLen:
		return notServed(fmt.Sprintf("its name is longer than %d characters", skillmd.MaxNameLen))
	case utf8.RuneCountInString(sk.GetDescription()) > skillmd.MaxDescriptionLen:
		return notServed(fmt.Sprintf("its description is longer than %d characters", skillmd.MaxDescriptionLen))
	}
	return nil
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

// served is a skill the extension serves: its GetSkill answer and every
// file of its folder (a Glob), within the extension's limits.
type served struct {
	skill *skillsvcv1.GetSkillResponse
	files []*skillsvcv1.FileInfo
}

// servedSkill checks that the skill folder dir is served over the extension
// (its own path, the rules hosts check, the per-skill limits) and returns
// it; notServed says why not.
func (s *identityServer) servedSkill(ctx context.Context, dir string) (*served, error) {
	got, err := s.h.skills.GetSkill(ctx, &skillsvcv1.GetSkillRequest{Path: dir})
	if err != nil {
		return nil, err
	}
	// GetSkill also answers to a skill's name; a URI must use the path.
	if got.GetSkill().GetPath() != dir {
		return nil, errNotCanonical
	}
	if err := followsRules(got.GetSkill(), dir); err != nil {
		return nil, err
	}
	// Directories are matches too: a skill at the file limit may have a
	// few, so ask for room for them.
	found, err := s.h.fs.Glob(ctx, &skillsvcv1.GlobRequest{Pattern: "**", Path: dir, MaxResults: 2 * skillmd.MaxSkillFiles})
	if err != nil {
		return nil, err
	}
	var total int64
	files := make([]*skillsvcv1.FileInfo, 0, len(found.GetMatches()))
	for _, f := range found.GetMatches() {
		if !f.GetIsDir() {
			total += f.GetSize()
			files = append(files, f)
		}
	}
	if found.GetTruncated() || len(files) > skillmd.MaxSkillFiles || total > skillmd.MaxSkillBytes {
		return nil, notServed(fmt.Sprintf("it is over the extension's limits of %d files and %d bytes a skill", skillmd.MaxSkillFiles, skillmd.MaxSkillBytes))
	}
	return &served{skill: got, files: files}, nil
}

// entry builds a skill's entry: the frontmatter from GetSkill, the files
// from a Glob of its folder, and each file's digest from the cache or by
// reading it once per ETag.
func (s *identityServer) entry(ctx context.Context, dir string) (*skillEntry, error) {
	sk, err := s.servedSkill(ctx, dir)
	if err != nil {
		return nil, err
	}
	resources := make([]skillResource, 0, len(sk.files))
	for _, f := range sk.files {
		d, err := s.digest(ctx, f)
		if err != nil {
			return nil, err
		}
		resources = append(resources, skillResource{URI: s.uriOf(f.GetPath()), Digest: d.sum, Size: d.size})
	}
	return &skillEntry{
		URI:         s.uriOf(dir + "/" + skillFileName),
		Frontmatter: sk.skill.GetFrontmatter().AsMap(),
		Resources:   resources,
	}, nil
}

func (s *identityServer) digest(ctx context.Context, f *skillsvcv1.FileInfo) (digest, error) {
	key := s.key + "\x00" + f.GetPath() + "\x00" + f.GetEtag()
	if d, ok := s.h.digests.Get(key); ok && f.GetEtag() != "" {
		return d, nil
	}
	h := sha256.New()
	n, err := s.download(ctx, f.GetPath(), h, skillmd.MaxSkillBytes)
	if err != nil {
		return digest{}, err
	}
	d := digest{sum: "sha256:" + hex.EncodeToString(h.Sum(nil)), size: n}
	if f.GetEtag() != "" {
		s.h.digests.Add(key, d)
	}
	return d, nil
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
