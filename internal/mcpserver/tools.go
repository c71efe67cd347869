package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/retryinfo"
	"github.com/skillsvc/skillsvc/internal/tooldefs"
)

// The tools, for hosts without the skills extension. Each is one RPC; the
// results are plain text a model reads well, and a failure is a tool error
// (isError) carrying the gRPC code and message, so the model can correct
// itself. Names, descriptions and input schemas come from tooldefs (shared
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
	def := tooldefs.Lookup(name)
	mcp.AddTool(s.srv, &mcp.Tool{Name: def.Name, Description: def.Description, InputSchema: def.InputSchema},
		func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
			text, err := run(ctx, in)
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: toolError(err)}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
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
	msg := fmt.Sprintf("Error (%s): %s", rpccode.Code(st.Code()), st.Message())
	if d, ok := retryinfo.Delay(err); ok {
		msg += fmt.Sprintf(" (retry after %s)", d)
	}
	return msg
}

func (s *identityServer) addTools() {
	fs, sk := s.h.fs, s.h.skills
	tool(s, "list_skills",
		func(ctx context.Context, in listSkillsIn) (string, error) {
			// With a task, the skills most relevant to it, best first: grouping
			// by category would undo that order.
			r, err := sk.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Category: in.Category, CharBudget: in.CharBudget, GroupByCategory: in.Query == "", SearchTool: "search_skills", Query: in.Query})
			if err != nil {
				return "", err
			}
			if r.GetIncluded() == 0 {
				return "No skills are available.", nil
			}
			return r.GetText(), nil
		})
	tool(s, "load_skill",
		func(ctx context.Context, in loadSkillIn) (string, error) {
			r, err := sk.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: in.Skill, Arguments: in.Arguments})
			return r.GetText(), err
		})
	tool(s, "read_skill_file",
		func(ctx context.Context, in readSkillFileIn) (string, error) {
			r, err := sk.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: in.Skill, File: in.Path})
			return r.GetContent(), err
		})
	tool(s, "search_skills",
		func(ctx context.Context, in searchSkillsIn) (string, error) {
			r, err := sk.SearchSkills(ctx, &skillsvcv1.SearchSkillsRequest{Query: in.Query, Limit: in.Limit})
			if err != nil {
				return "", err
			}
			if len(r.GetResults()) == 0 {
				return "No matching skills.", nil
			}
			var b strings.Builder
			for _, res := range r.GetResults() {
				sum := res.GetSkill()
				fmt.Fprintf(&b, "- %s (%s): %s\n", sum.GetName(), sum.GetPath(), sum.GetDescription())
				if alts := res.GetAlternates(); len(alts) > 0 {
					b.WriteString("  copies:")
					for i, a := range alts {
						if i > 0 {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, " %s (%s, %s)", a.GetName(), a.GetPath(), a.GetLayer())
					}
					b.WriteString("\n")
				}
			}
			if r.GetTruncated() {
				b.WriteString("(Weaker matches were left out to keep the reply small: ask for fewer or narrow the query.)\n")
			}
			return b.String(), nil
		})
	tool(s, "ls",
		func(ctx context.Context, in pathIn) (string, error) {
			var b strings.Builder
			req := &skillsvcv1.ListRequest{Path: in.Path}
			for n := 0; ; n++ {
				r, err := fs.List(ctx, req)
				if err != nil {
					return "", err
				}
				for _, e := range r.GetEntries() {
					if e.GetIsDir() {
						fmt.Fprintf(&b, "%s/\n", e.GetPath())
					} else {
						fmt.Fprintf(&b, "%s\t%d\n", e.GetPath(), e.GetSize())
					}
				}
				if r.GetNextPageToken() == "" {
					break
				}
				if n == 9 { // ten pages is more than a model should read
					b.WriteString("… more entries: narrow the path or use glob\n")
					break
				}
				req.PageToken = r.GetNextPageToken()
			}
			if b.Len() == 0 {
				return in.Path + " is empty.", nil
			}
			return b.String(), nil
		})
	tool(s, "read_file",
		func(ctx context.Context, in readFileIn) (string, error) {
			r, err := fs.Read(ctx, &skillsvcv1.ReadRequest{Path: in.Path, Offset: in.Offset, Limit: in.Limit, LineNumbers: true})
			if err != nil {
				return "", err
			}
			text := r.GetContent()
			if r.GetNextOffset() < r.GetTotalLines() {
				text += fmt.Sprintf("\n[lines %d-%d of %d; continue with offset=%d]", in.Offset+1, r.GetNextOffset(), r.GetTotalLines(), r.GetNextOffset())
			}
			return text, nil
		})
	tool(s, "write_file",
		func(ctx context.Context, in writeFileIn) (string, error) {
			if _, err := fs.Write(ctx, &skillsvcv1.WriteRequest{Path: in.Path, Content: in.Content}); err != nil {
				return "", err
			}
			return fmt.Sprintf("Wrote %d bytes to %s.", len(in.Content), in.Path), nil
		})
	tool(s, "edit_file",
		func(ctx context.Context, in editFileIn) (string, error) {
			r, err := fs.Edit(ctx, &skillsvcv1.EditRequest{Path: in.Path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Replaced %d occurrence(s) in %s.", r.GetOccurrences(), in.Path), nil
		})
	tool(s, "glob",
		func(ctx context.Context, in globIn) (string, error) {
			r, err := fs.Glob(ctx, &skillsvcv1.GlobRequest{Pattern: in.Pattern, Path: in.Path})
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, m := range r.GetMatches() {
				b.WriteString(m.GetPath() + "\n")
			}
			if b.Len() == 0 {
				return "No files match.", nil
			}
			if r.GetTruncated() {
				b.WriteString("… more files match: narrow the pattern\n")
			}
			return b.String(), nil
		})
	tool(s, "grep",
		func(ctx context.Context, in grepIn) (string, error) {
			r, err := fs.Grep(ctx, &skillsvcv1.GrepRequest{Pattern: in.Pattern, Path: in.Path, Glob: in.Glob, Regex: in.Regex, CaseInsensitive: in.CaseInsensitive})
			if err != nil {
				return "", err
			}
			var b strings.Builder
			for _, m := range r.GetMatches() {
				fmt.Fprintf(&b, "%s:%d: %s\n", m.GetPath(), m.GetLine(), m.GetText())
			}
			if b.Len() == 0 {
				return "No matches.", nil
			}
			if r.GetTruncated() {
				b.WriteString("… more matches: narrow the pattern or path\n")
			}
			return b.String(), nil
		})
}
