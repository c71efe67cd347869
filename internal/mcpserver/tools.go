package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skillmd"
	"github.com/skillsvc/skillsvc/internal/skilluse"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/tooldefs"
	"github.com/skillsvc/skillsvc/internal/vfs"
)

// The tools, for hosts without the skills extension. Each is one catalog or
// filesystem call (the RPC it stands for, in the logs and the audit
// trail); the results are plain text a model reads well, and a failure is
// a tool error (isError) carrying the error table's gRPC code and message,
// so the model can correct itself. Names, descriptions and input schemas come from tooldefs (shared
// with the clients); the argument types below decode what those schemas
// accept, which tools_internal_test.go checks.

type listSkillsIn struct {
	Category   *string `json:"category,omitempty"`
	CharBudget int32   `json:"char_budget,omitempty"`
	Query      string  `json:"query,omitempty"`
}

type loadSkillIn struct {
	Skill     string `json:"skill"`
	Arguments string `json:"arguments,omitempty"`
}

type readSkillFileIn struct {
	Skill string `json:"skill"`
	Path  string `json:"path"`
}

type searchSkillsIn struct {
	Query string `json:"query"`
	Limit int32  `json:"limit,omitempty"`
}

type pathIn struct {
	Path string `json:"path"`
}

type readFileIn struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset,omitempty"`
	Limit  int64  `json:"limit,omitempty"`
}

type writeFileIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editFileIn struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type globIn struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

type grepIn struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path,omitempty"`
	Glob            string `json:"glob,omitempty"`
	Regex           bool   `json:"regex,omitempty"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
}

// tool adds the tool tooldefs defines as name, whose handler returns text
// or a gRPC error. The SDK validates the arguments against the defined
// schema before decoding them into In.
func tool[In any](s *identityServer, name string, run func(context.Context, In) (string, error)) {
	toolWithMeta(s, name, func(ctx context.Context, in In) (string, mcp.Meta, error) {
		text, err := run(ctx, in)
		return text, nil, err
	})
}

// toolWithMeta is tool for a handler whose result also carries _meta,
// which hosts read and models do not see.
func toolWithMeta[In any](s *identityServer, name string, run func(context.Context, In) (string, mcp.Meta, error)) {
	def := tooldefs.Lookup(name)
	a := def.Annotations
	mcp.AddTool(s.srv, &mcp.Tool{Name: def.Name, Title: a.Title, Description: def.Description, InputSchema: def.InputSchema,
		Annotations: &mcp.ToolAnnotations{Title: a.Title, ReadOnlyHint: *a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: *a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			text, meta, err := run(ctx, in)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: toolError(err)}}}, nil, nil
			}
			return &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
}

// toolError is a failure as the model sees it: the code, the message, and
// when to retry if the caller is over a limit.
func toolError(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return "Error: internal error"
	}
	// The canonical name (NOT_FOUND), as the Python and TypeScript clients'
	// skill tools word it.
	msg := fmt.Sprintf("Error (%s): %s", rpccode.Code(st.Code()), modelFacing(st.Message()))
	if d, ok := retryinfo.Delay(err); ok {
		msg += fmt.Sprintf(" (retry after %s)", d)
	}
	return msg
}

// modelFacing rewords the filesystem's refusals that name gRPC calls
// (Download, Upload, Write) an MCP model does not have: they say what the
// tools can do instead.
var modelFacing = strings.NewReplacer(
	"; use Download", "; these tools read text files only",
	"; use Upload for binary files", "; write_file stores text only",
	", Write stores at most", ", write_file stores at most",
	"; use Upload", "",
).Replace

// The gRPC methods the tools stand for, in the logs and the audit trail.
const (
	skillsService = "/skillsvc.v1.SkillsService/"
	fsService     = "/skillsvc.v1.FilesystemService/"
)

func (s *identityServer) addTools() {
	h, cat, fs := s.h, s.h.catalog, s.h.fs
	tool(s, "list_skills",
		func(ctx context.Context, in listSkillsIn) (string, error) {
			// With a task, the skills most relevant to it, best first: grouping
			// by category would undo that order.
			req := &skillsvcv1.FormatSkillsRequest{Category: in.Category, CharBudget: in.CharBudget, GroupByCategory: in.Query == "", SearchTool: "search_skills", Query: in.Query}
			b, err := call(ctx, h, skillsService+"FormatSkills", req, func(id mounts.Caller) (skillview.Block, error) {
				b, err := cat.Prompt(ctx, id, skillview.ListOptions{Category: req.GetCategory(), FilterCategory: req.Category != nil},
					skillmd.FormatOptions{CharBudget: int(req.GetCharBudget()), GroupByCategory: req.GetGroupByCategory(), SearchTool: req.GetSearchTool(), Query: req.GetQuery()})
				if err == nil {
					h.usage.Block(ctx, skilluse.MCP, id, in.Query, skilluse.OfBlock(b.Offered))
				}
				return b, err
			})
			if err != nil {
				return "", err
			}
			if b.Included == 0 {
				return "No skills are available.", nil
			}
			return b.Text, nil
		})
	tool(s, "load_skill",
		func(ctx context.Context, in loadSkillIn) (string, error) {
			return call(ctx, h, skillsService+"RenderSkill", &skillsvcv1.RenderSkillRequest{Path: in.Skill, Arguments: in.Arguments}, func(id mounts.Caller) (string, error) {
				text, d, err := cat.Render(ctx, id, in.Skill, skillview.RenderOptions{Arguments: in.Arguments})
				if err == nil {
					h.usage.Activated(ctx, skilluse.MCP, id, skilluse.Of(d.Skill))
				}
				return text, err
			})
		})
	tool(s, "read_skill_file",
		func(ctx context.Context, in readSkillFileIn) (string, error) {
			return call(ctx, h, skillsService+"ReadSkillFile", &skillsvcv1.ReadSkillFileRequest{Path: in.Skill, File: in.Path}, func(id mounts.Caller) (string, error) {
				content, vpath, sk, err := cat.ReadSkillFile(ctx, id, in.Skill, in.Path, skillview.ReadOptions{})
				if err == nil {
					h.usage.File(ctx, skilluse.MCP, id, skilluse.OfRef(sk), strings.TrimPrefix(vpath, h.skillsMount+"/"+sk.Dir+"/"))
				}
				return content, err
			})
		})
	toolWithMeta(s, "search_skills",
		func(ctx context.Context, in searchSkillsIn) (string, mcp.Meta, error) {
			r, err := call(ctx, h, skillsService+"SearchSkills", &skillsvcv1.SearchSkillsRequest{Query: in.Query, Limit: in.Limit}, func(id mounts.Caller) (skillview.Results, error) {
				r, err := cat.Search(ctx, id, skillview.SearchOptions{Query: in.Query, Limit: in.Limit})
				if err == nil {
					found := skilluse.Hits(r.Hits[:server.SearchFit(r.Hits, cat.MaxPageBytes())]) // those the reply names
					h.usage.Searched(ctx, skilluse.MCP, id, in.Query, found, len(found))
				}
				return r, err
			})
			if err != nil {
				return "", nil, err
			}
			if len(r.Hits) == 0 {
				return "No matching skills.", nil, nil
			}
			n := server.SearchFit(r.Hits, cat.MaxPageBytes())
			var b strings.Builder
			for _, hit := range r.Hits[:n] {
				// The description as listings serve it.
				fmt.Fprintf(&b, "- %s (%s): %s\n", hit.Name, hit.Path, skillmd.Shorten(hit.Description, skillmd.MaxDescriptionLen))
				if alts := hit.Alternates; len(alts) > 0 {
					b.WriteString("  copies:")
					for i, a := range alts {
						if i > 0 {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, " %s (%s, %s)", a.Name, a.Path, a.Layer)
					}
					b.WriteString("\n")
				}
			}
			if n < len(r.Hits) {
				b.WriteString("(Weaker matches were left out to keep the reply small: ask for fewer or narrow the query.)\n")
			}
			return b.String(), s.searchMeta(ctx, r.Hits[:n]), nil
		})
	tool(s, "ls",
		func(ctx context.Context, in pathIn) (string, error) {
			var b strings.Builder
			req := &skillsvcv1.ListRequest{Path: in.Path}
			for n := 0; ; n++ {
				r, err := call(ctx, h, fsService+"List", req, func(id mounts.Caller) (vfs.ListResult, error) {
					if err := server.RequirePath(req.Path); err != nil {
						return vfs.ListResult{}, err
					}
					return fs.List(ctx, id, req.Path, 0, req.PageToken)
				})
				if err != nil {
					return "", err
				}
				for _, e := range r.Entries {
					if e.IsDir {
						fmt.Fprintf(&b, "%s/\n", e.Path)
					} else {
						fmt.Fprintf(&b, "%s\t%d\n", e.Path, e.Size)
					}
				}
				if r.NextPageToken == "" {
					break
				}
				if n == 9 { // ten pages is more than a model should read
					b.WriteString("… more entries: narrow the path or use glob\n")
					break
				}
				req.PageToken = r.NextPageToken
			}
			if b.Len() == 0 {
				return in.Path + " is empty.", nil
			}
			return b.String(), nil
		})
	tool(s, "read_file",
		func(ctx context.Context, in readFileIn) (string, error) {
			r, err := call(ctx, h, fsService+"Read", &skillsvcv1.ReadRequest{Path: in.Path, Offset: in.Offset, Limit: in.Limit, LineNumbers: true}, func(id mounts.Caller) (vfs.ReadResult, error) {
				if err := server.RequirePath(in.Path); err != nil {
					return vfs.ReadResult{}, err
				}
				return fs.Read(ctx, id, in.Path, in.Offset, in.Limit, true)
			})
			if err != nil {
				return "", err
			}
			text := r.Content
			if r.NextOffset < r.TotalLines {
				text += fmt.Sprintf("\n[lines %d-%d of %d; continue with offset=%d]", in.Offset+1, r.NextOffset, r.TotalLines, r.NextOffset)
			}
			return text, nil
		})
	tool(s, "write_file",
		func(ctx context.Context, in writeFileIn) (string, error) {
			_, err := call(ctx, h, fsService+"Write", &skillsvcv1.WriteRequest{Path: in.Path, Content: in.Content}, func(id mounts.Caller) (vfs.Info, error) {
				if err := server.RequirePath(in.Path); err != nil {
					return vfs.Info{}, err
				}
				return fs.Write(ctx, id, in.Path, in.Content, vfs.WriteOptions{})
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Wrote %d bytes to %s.", len(in.Content), in.Path), nil
		})
	tool(s, "edit_file",
		func(ctx context.Context, in editFileIn) (string, error) {
			req := &skillsvcv1.EditRequest{Path: in.Path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll}
			r, err := call(ctx, h, fsService+"Edit", req, func(id mounts.Caller) (vfs.EditResult, error) {
				if err := server.RequirePath(in.Path); err != nil {
					return vfs.EditResult{}, err
				}
				return fs.Edit(ctx, id, in.Path, in.OldString, in.NewString, in.ReplaceAll)
			})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Replaced %d occurrence(s) in %s.", r.Occurrences, in.Path), nil
		})
	tool(s, "glob",
		func(ctx context.Context, in globIn) (string, error) {
			r, err := call(ctx, h, fsService+"Glob", &skillsvcv1.GlobRequest{Pattern: in.Pattern, Path: in.Path}, func(id mounts.Caller) (vfs.GlobResult, error) {
				return fs.Glob(ctx, id, in.Path, vfs.GlobOptions{Pattern: in.Pattern, Hidden: vfs.HiddenInclude})
			})
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, m := range r.Matches {
				b.WriteString(m.Path + "\n")
			}
			if b.Len() == 0 {
				return "No files match.", nil
			}
			if r.Truncated {
				b.WriteString("… more files match: narrow the pattern\n")
			}
			return b.String(), nil
		})
	tool(s, "grep",
		func(ctx context.Context, in grepIn) (string, error) {
			req := &skillsvcv1.GrepRequest{Pattern: in.Pattern, Path: in.Path, Glob: in.Glob, Regex: in.Regex, CaseInsensitive: in.CaseInsensitive}
			r, err := call(ctx, h, fsService+"Grep", req, func(id mounts.Caller) (vfs.GrepResult, error) {
				return fs.Grep(ctx, id, in.Path, vfs.GrepOptions{Pattern: in.Pattern, Glob: in.Glob, Regex: in.Regex, CaseInsensitive: in.CaseInsensitive})
			})
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, m := range r.Matches {
				fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
			}
			if b.Len() == 0 {
				return "No matches.", nil
			}
			if r.Truncated {
				b.WriteString("… more matches: narrow the pattern or path\n")
			}
			return b.String(), nil
		})
}
