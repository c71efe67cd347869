package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
)

// The tools, for hosts without the skills extension. Each is one RPC; the
// results are plain text a model reads well, and a failure is a tool error
// (isError) carrying the gRPC code and message, so the model can correct
// itself.

type listSkillsIn struct {
	Category   *string `json:"category,omitempty" jsonschema:"only skills of this category; omit for all"`
	CharBudget int32   `json:"char_budget,omitempty" jsonschema:"characters the list may take; 0 means 12000"`
}

type loadSkillIn struct {
	Skill     string `json:"skill" jsonschema:"the skill's name or path, e.g. release-notes or writing/release-notes"`
	Arguments string `json:"arguments,omitempty" jsonschema:"text for the skill's $ARGUMENTS placeholder, e.g. the task"`
}

type readSkillFileIn struct {
	Skill string `json:"skill" jsonschema:"the skill's name or path"`
	Path  string `json:"path" jsonschema:"file relative to the skill folder, e.g. references/style.md"`
}

type searchSkillsIn struct {
	Query string `json:"query" jsonschema:"what the task is about, in words"`
	Limit int32  `json:"limit,omitempty" jsonschema:"most results; 0 means 10"`
}

type pathIn struct {
	Path string `json:"path" jsonschema:"absolute path under /workspace, /ticket or /skills"`
}

type readFileIn struct {
	Path   string `json:"path" jsonschema:"absolute path of a text file, e.g. /workspace/notes.md"`
	Offset int64  `json:"offset,omitempty" jsonschema:"first line to return, 0-based"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"lines to return; 0 means 2000"`
}

type writeFileIn struct {
	Path    string `json:"path" jsonschema:"absolute path under /workspace or /ticket"`
	Content string `json:"content" jsonschema:"the whole new content of the file"`
}

type editFileIn struct {
	Path       string `json:"path" jsonschema:"absolute path of the file to edit"`
	OldString  string `json:"old_string" jsonschema:"exact text to replace; must occur once unless replace_all"`
	NewString  string `json:"new_string" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

type globIn struct {
	Pattern string `json:"pattern" jsonschema:"doublestar pattern relative to path, e.g. **/*.md"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search from; default /"`
}

type grepIn struct {
	Pattern         string `json:"pattern" jsonschema:"text to find; a regular expression when regex is set"`
	Path            string `json:"path,omitempty" jsonschema:"file or directory to search; default /"`
	Glob            string `json:"glob,omitempty" jsonschema:"only files whose path relative to path matches this pattern, e.g. **/*.md"`
	Regex           bool   `json:"regex,omitempty" jsonschema:"treat pattern as an RE2 regular expression"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"ignore case"`
}

// tool adds a tool whose handler returns text or a gRPC error.
func tool[In any](s *identityServer, name, description string, run func(context.Context, In) (string, error)) {
	mcp.AddTool(s.srv, &mcp.Tool{Name: name, Description: description},
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
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			msg += fmt.Sprintf(" (retry after %s)", ri.GetRetryDelay().AsDuration())
		}
	}
	return msg
}

func (s *identityServer) addTools() {
	fs, sk := s.h.fs, s.h.skills
	tool(s, "list_skills", "List the skills available to you: each skill's name, description and location, as a block for your context. Load one with load_skill before doing a task it describes.",
		func(ctx context.Context, in listSkillsIn) (string, error) {
			r, err := sk.FormatSkills(ctx, &skillsvcv1.FormatSkillsRequest{Category: in.Category, CharBudget: in.CharBudget, GroupByCategory: true, SearchTool: "search_skills"})
			if err != nil {
				return "", err
			}
			if r.GetIncluded() == 0 {
				return "No skills are available.", nil
			}
			return r.GetText(), nil
		})
	tool(s, "load_skill", "Load a skill's instructions (its SKILL.md body) to follow them now. Pass the task as arguments when the skill takes them.",
		func(ctx context.Context, in loadSkillIn) (string, error) {
			r, err := sk.RenderSkill(ctx, &skillsvcv1.RenderSkillRequest{Path: in.Skill, Arguments: in.Arguments})
			return r.GetText(), err
		})
	tool(s, "read_skill_file", "Read one text file of a skill, such as a reference or a script its instructions name, by its path relative to the skill folder.",
		func(ctx context.Context, in readSkillFileIn) (string, error) {
			r, err := sk.ReadSkillFile(ctx, &skillsvcv1.ReadSkillFileRequest{Path: in.Skill, File: in.Path})
			return r.GetContent(), err
		})
	tool(s, "search_skills", "Find the skills most relevant to a task description, best first, when the skill list is long or was cut short.",
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
			}
			if r.GetTruncated() {
				b.WriteString("(Weaker matches were left out to keep the reply small: ask for fewer or narrow the query.)\n")
			}
			return b.String(), nil
		})
	tool(s, "ls", "List a directory: one entry per line, directories ending in /, files with their size in bytes.",
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
	tool(s, "read_file", "Read a text file, with line numbers (cat -n style). offset and limit select lines for long files.",
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
	tool(s, "write_file", "Create or overwrite a file with the given content.",
		func(ctx context.Context, in writeFileIn) (string, error) {
			if _, err := fs.Write(ctx, &skillsvcv1.WriteRequest{Path: in.Path, Content: in.Content}); err != nil {
				return "", err
			}
			return fmt.Sprintf("Wrote %d bytes to %s.", len(in.Content), in.Path), nil
		})
	tool(s, "edit_file", "Replace exact text in a file: old_string must occur exactly once unless replace_all is set. Concurrent edits are merged safely.",
		func(ctx context.Context, in editFileIn) (string, error) {
			r, err := fs.Edit(ctx, &skillsvcv1.EditRequest{Path: in.Path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("Replaced %d occurrence(s) in %s.", r.GetOccurrences(), in.Path), nil
		})
	tool(s, "glob", "Find files by name pattern, e.g. **/*.md under /workspace; one path per line.",
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
	tool(s, "grep", "Search file contents; one match per line as path:line: text.",
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
