package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillsvc/skillsvc/internal/mcpserver"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
)

type (
	dirParams struct {
		mcp.ParamsBase
		URI    string `json:"uri"`
		Cursor string `json:"cursor,omitempty"`
	}
	dirResult struct {
		mcp.ResultBase
		TTLMs      *int            `json:"ttlMs"`
		CacheScope string          `json:"cacheScope"`
		Resources  []*mcp.Resource `json:"resources"`
		NextCursor string          `json:"nextCursor"`
	}
)

// awkward is alice's library of what hosts trip over: an empty file, file
// names with a space, '#', '%', '?' and non-ASCII letters, nested folders,
// a binary file; and a skill hosts reject, which is not served.
func awkward() *skillstest.Builder {
	b := skillstest.New()
	b.User("alice").
		Skill("docs/docx", "docx", "Edit Word documents.", "# docx\nRun scripts/office/unpack.py.\n").
		File("docs/docx/scripts/__init__.py", "").
		File("docs/docx/scripts/office/unpack.py", "print('unpack')\n").
		File("docs/docx/references/my notes.md", "spaced\n").
		File("docs/docx/references/a#b.md", "hash\n").
		File("docs/docx/references/100%.md", "percent\n").
		File("docs/docx/references/why?.md", "question\n").
		File("docs/docx/references/résumé.md", "accented\n").
		File("docs/docx/references/deep/nested/level.md", "nested\n").
		File("docs/docx/assets/logo.png", string(binaryAsset)).
		Skill("flat-skill", "flat-skill", "A skill without a category.", "Flat.\n").
		File("flat-skill/notes/one.md", "one\n").
		File("test/folder-differs/SKILL.md", skillstest.SkillMD("other-name", "Named unlike its folder.", "Body.\n"))
	b.User("bob").Skill("ops/deploy", "deploy", "Deploy the service.", "Deploy.\n")
	return b
}

// keyOf is the object key of user's file at a skill URI.
func keyOf(t *testing.T, user, uri string) string {
	t.Helper()
	p, err := url.PathUnescape(strings.TrimPrefix(uri, "skill://"))
	if err != nil {
		t.Fatal(err)
	}
	return user + "/skills/" + p
}

func readDir(t *testing.T, s *mcp.ClientSession, uri, cursor string) (*dirResult, error) {
	t.Helper()
	return mcp.CallCustomMethod[*dirParams, *dirResult](t.Context(), s, "resources/directory/read", &dirParams{URI: uri, Cursor: cursor})
}

// walk reads the folder at uri, every page, and every folder below it,
// and returns the files found with their sizes; it checks each page's
// shape on the way.
func walk(t *testing.T, s *mcp.ClientSession, uri string, files map[string]int64) {
	t.Helper()
	var cursor string
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("%s: more than 100 pages", uri)
		}
		r, err := readDir(t, s, uri, cursor)
		if err != nil {
			t.Fatalf("resources/directory/read %s: %v", uri, err)
		}
		if r.TTLMs == nil || r.CacheScope != "private" {
			t.Errorf("%s: ttlMs %v cacheScope %q, want both", uri, r.TTLMs, r.CacheScope)
		}
		for _, c := range r.Resources {
			if parent, name, _ := strings.Cut(strings.TrimPrefix(c.URI, uri+"/"), "/"); parent == "" || name != "" || !strings.HasPrefix(c.URI, uri+"/") {
				t.Errorf("%s lists %s, not a direct child", uri, c.URI)
			}
			if c.Name == "" || c.MIMEType == "" {
				t.Errorf("%s: child %+v lacks a name or mimeType", uri, c)
			}
			if c.MIMEType == "inode/directory" {
				walk(t, s, c.URI, files)
			} else {
				files[c.URI] = c.Size
			}
		}
		if cursor = r.NextCursor; cursor == "" {
			return
		}
	}
}

// TestDirectoryRead: resources/directory/read, declared as directoryRead,
// walks every served skill from its root to exactly the files of its
// skills/get manifest, a page at a time; anything but a folder of a served
// skill is Invalid params.
func TestDirectoryRead(t *testing.T) {
	// Two children a page: the cursor carries each folder's listing.
	e := start(t, awkward().Bucket(t), func(c *mcpserver.Config) { c.SkillsPageSize = 2 })
	s := e.connect(identity("alice", "t1"), nil)

	ext, _ := json.Marshal(s.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/skills"])
	if string(ext) != `{"directoryRead":true}` {
		t.Fatalf("the extension's capability = %s, want directoryRead inline", ext)
	}

	for _, sk := range listAll(t, s) {
		root := strings.TrimSuffix(sk.URI, "/SKILL.md")
		want := map[string]int64{}
		for _, r := range sk.Resources {
			want[r.URI] = r.Size
		}
		for _, uri := range []string{root, root + "/"} {
			got := map[string]int64{}
			walk(t, s, strings.TrimSuffix(uri, "/"), got)
			if !maps.Equal(got, want) {
				t.Errorf("the walk from %s found %v, want the manifest's %v", uri, got, want)
			}
		}
	}

	// A folder's children: subfolders as inode/directory, files by type.
	var children []string
	for cursor := ""; ; {
		r, err := readDir(t, s, "skill://docs/docx/scripts/", cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Resources {
			// A file's type is the system's for its extension.
			children = append(children, fmt.Sprintf("%s %s %v %d", c.URI, c.Name, c.MIMEType == "inode/directory", c.Size))
		}
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	want := []string{
		"skill://docs/docx/scripts/__init__.py __init__.py false 0",
		"skill://docs/docx/scripts/office office true 0",
	}
	if !slices.Equal(children, want) {
		t.Errorf("scripts/ lists %q, want %q", children, want)
	}

	first, err := readDir(t, s, "skill://docs/docx/references", "")
	if err != nil || first.NextCursor == "" {
		t.Fatalf("references, first page: %+v %v, want a cursor", first, err)
	}
	for name, uri := range map[string]string{
		"a file":                       "skill://docs/docx/SKILL.md",
		"a file with a slash":          "skill://docs/docx/SKILL.md/",
		"a missing folder":             "skill://docs/docx/nothing",
		"a category":                   "skill://docs",
		"the mount":                    "skill://",
		"another user's skill":         "skill://ops/deploy",
		"a skill hosts reject":         "skill://test/folder-differs",
		"not canonical":                "skill://docs/docx/references/deep/../deep",
		"two slashes":                  "skill://docs/docx//",
		"a skill's name, not its path": "skill://docx",
		"another scheme":               "file:///etc",
	} {
		_, err := readDir(t, s, uri, "")
		wantRPCCode(t, name+": "+uri, err, jsonrpc.CodeInvalidParams)
	}
	for name, cursor := range map[string]string{
		"garbage":          "!!",
		"another folder's": first.NextCursor,
		"too long":         strings.Repeat("A", 5000),
	} {
		_, err := readDir(t, s, "skill://docs/docx/scripts", cursor)
		wantRPCCode(t, "cursor "+name, err, jsonrpc.CodeInvalidParams)
	}
}

// TestResourcesList: resources/list names each served skill's SKILL.md by
// its frontmatter, paged through the catalog, and only the skills
// skills/list serves.
func TestResourcesList(t *testing.T) {
	bucket := awkward().Bucket(t)
	e := start(t, bucket, func(c *mcpserver.Config) { c.SkillsPageSize = 1 })
	s := e.connect(identity("alice", "t1"), nil)
	var got []string
	for r, err := range s.Resources(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		size := len(objectBytes(t, bucket, keyOf(t, "alice", r.URI)))
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%v", r.URI, r.Name, r.Description, r.MIMEType, r.Size == int64(size)))
	}
	slices.Sort(got)
	want := []string{
		"skill://docs/docx/SKILL.md|docx|Edit Word documents.|text/markdown|true",
		"skill://flat-skill/SKILL.md|flat-skill|A skill without a category.|text/markdown|true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("resources/list = %q, want %q", got, want)
	}
	_, err := s.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: "not-a-cursor"})
	wantRPCCode(t, "resources/list with a bad cursor", err, jsonrpc.CodeInvalidParams)
}

// TestReadEveryFile: resources/read of every listed file is in one of the
// schema's two forms, as sent: text (an empty file's "" included) or a
// base64 blob, whatever its name.
func TestReadEveryFile(t *testing.T) {
	bucket := awkward().Bucket(t)
	e := start(t, bucket, nil)
	s := e.connect(identity("alice", "t1"), nil)
	alice := identity("alice", "t1")
	sid := openSession(t, e.h, alice)
	var files int
	for _, sk := range listAll(t, s) {
		for _, r := range sk.Resources {
			files++
			data := objectBytes(t, bucket, keyOf(t, "alice", r.URI))
			uri, _ := json.Marshal(r.URI)
			msg, err := reply(rawPost(e.h, t.Context(), alice, sid, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":`+string(uri)+`}}`))
			if err != nil || msg == nil || msg.Error != nil {
				t.Fatalf("read %s: %+v %v", r.URI, msg, err)
			}
			var res struct {
				Contents []struct {
					URI  string
					Text *string
					Blob *[]byte
				}
			}
			if err := json.Unmarshal(msg.Result, &res); err != nil || len(res.Contents) != 1 {
				t.Fatalf("read %s: %s %v", r.URI, msg.Result, err)
			}
			switch c := res.Contents[0]; {
			case c.URI != r.URI:
				t.Errorf("read %s answered for %s", r.URI, c.URI)
			case (c.Text == nil) == (c.Blob == nil):
				t.Errorf("read %s = %s, want text or blob", r.URI, msg.Result)
			case c.Text != nil && *c.Text != string(data), c.Blob != nil && string(*c.Blob) != string(data):
				t.Errorf("read %s = %s, want %q", r.URI, msg.Result, data)
			}
		}
	}
	if files != 12 {
		t.Errorf("read %d files, want the 12 of the served skills", files)
	}
}
