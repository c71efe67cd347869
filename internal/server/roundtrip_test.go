package server_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestRoundTrip checks the conversion of requests and responses in every
// unary handler.
func TestRoundTrip(t *testing.T) {
	bucket := objstoretest.NewBucket(t, nil)
	c := start(t, bucket, options{})
	ctx := asAlice(t)
	if _, err := bucket.Put(t.Context(), "alice/skills/pdf/reference.md", strings.NewReader("# Ref\n"), 6, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	w, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/docs/a.md", Content: "one\ntwo\nthree\n"})
	if err != nil {
		t.Fatal(err)
	}
	if fi := w.GetInfo(); fi.GetPath() != "/workspace/docs/a.md" || fi.GetName() != "a.md" || fi.GetSize() != 14 || fi.GetEtag() == "" || fi.GetModified() == nil || fi.GetIsDir() {
		t.Errorf("Write info = %v", fi)
	}
	if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: "/workspace/docs/b.md", Content: "two"}); err != nil {
		t.Fatal(err)
	}

	t.Run("Stat", func(t *testing.T) {
		res, err := c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/docs/a.md"})
		if err != nil || res.GetInfo().GetEtag() != w.GetInfo().GetEtag() || res.GetInfo().GetSize() != 14 {
			t.Errorf("Stat = %v, %v", res, err)
		}
		res, err = c.fs.Stat(ctx, &skillsvcv1.StatRequest{Path: "/workspace/docs"})
		if err != nil || !res.GetInfo().GetIsDir() || res.GetInfo().GetModified() != nil || res.GetInfo().GetEtag() != "" {
			t.Errorf("Stat of a directory = %v, %v", res, err)
		}
	})
	t.Run("List", func(t *testing.T) {
		res, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace", PageSize: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.GetEntries()) != 1 || !res.GetEntries()[0].GetIsDir() || res.GetEntries()[0].GetPath() != "/workspace/docs" {
			t.Errorf("List(/workspace) = %v", res.GetEntries())
		}
		var names []string
		token := ""
		for {
			res, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace/docs", PageSize: 1, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.GetEntries() {
				names = append(names, e.GetName())
				if e.GetModified() == nil || e.GetEtag() == "" {
					t.Errorf("file entry %v without modified time or etag", e)
				}
			}
			if token = res.GetNextPageToken(); token == "" {
				break
			}
		}
		if strings.Join(names, ",") != "a.md,b.md" {
			t.Errorf("paged List = %v, want a.md, b.md", names)
		}
	})
	t.Run("Read", func(t *testing.T) {
		res, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/docs/a.md", Offset: 1, Limit: 1, LineNumbers: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetContent() != "     2\ttwo" || res.GetTotalLines() != 3 || res.GetNextOffset() != 2 ||
			res.GetPath() != "/workspace/docs/a.md" || res.GetEtag() != w.GetInfo().GetEtag() {
			t.Errorf("Read = %v", res)
		}
		if res.GetEndsWithNewline() {
			t.Errorf("Read of a middle line: ends_with_newline set")
		}
		res, err = c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/docs/a.md", Offset: 2})
		if err != nil || res.GetContent() != "three" || !res.GetEndsWithNewline() {
			t.Errorf("Read to the end = %v, %v; want ends_with_newline", res, err)
		}
		res, err = c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/skills/pdf/reference"})
		if err != nil || res.GetPath() != "/skills/pdf/reference.md" || res.GetContent() != "# Ref" {
			t.Errorf("Read with .md fallback = %v, %v", res, err)
		}
	})
	t.Run("Glob", func(t *testing.T) {
		res, err := c.fs.Glob(ctx, &skillsvcv1.GlobRequest{Path: "/", Pattern: "**/*.md", MaxResults: 2})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.GetMatches() {
			got = append(got, m.GetPath())
		}
		if strings.Join(got, ",") != "/skills/pdf/reference.md,/workspace/docs/a.md" || !res.GetTruncated() {
			t.Errorf("Glob = %v truncated %v", got, res.GetTruncated())
		}
	})
	t.Run("Grep", func(t *testing.T) {
		res, err := c.fs.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "TWO", CaseInsensitive: true, Glob: "**/*.md"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range res.GetMatches() {
			got = append(got, fmt.Sprintf("%s:%d:%s", m.GetPath(), m.GetLine(), m.GetText()))
		}
		if strings.Join(got, " ") != "/workspace/docs/a.md:2:two /workspace/docs/b.md:1:two" || res.GetTruncated() ||
			res.GetFilesScanned() != 2 || res.GetFilesSkipped() != 0 {
			t.Errorf("Grep = %v truncated %v scanned %d skipped %d", got, res.GetTruncated(), res.GetFilesScanned(), res.GetFilesSkipped())
		}
		res, err = c.fs.Grep(ctx, &skillsvcv1.GrepRequest{Path: "/workspace", Pattern: "t.o", Regex: true, MaxMatches: 1})
		if err != nil || len(res.GetMatches()) != 1 || !res.GetTruncated() {
			t.Errorf("Grep with max_matches 1 = %v, %v", res, err)
		}
	})
	t.Run("Edit", func(t *testing.T) {
		res, err := c.fs.Edit(ctx, &skillsvcv1.EditRequest{Path: "/workspace/docs/a.md", OldString: "o", NewString: "0", ReplaceAll: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetOccurrences() != 2 || res.GetInfo().GetEtag() == w.GetInfo().GetEtag() || res.GetInfo().GetSize() != 14 {
			t.Errorf("Edit = %v", res)
		}
		read, err := c.fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/docs/a.md"})
		if err != nil || read.GetContent() != "0ne\ntw0\nthree" {
			t.Errorf("after Edit Read = %v, %v", read, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		res, err := c.fs.Delete(ctx, &skillsvcv1.DeleteRequest{Path: "/workspace/docs", Recursive: true})
		if err != nil || res.GetDeleted() != 2 {
			t.Errorf("Delete = %v, %v; want 2 deleted", res, err)
		}
		list, err := c.fs.List(ctx, &skillsvcv1.ListRequest{Path: "/workspace"})
		if err != nil || len(list.GetEntries()) != 0 {
			t.Errorf("List after Delete = %v, %v", list, err)
		}
	})
	t.Run("root with ticket", func(t *testing.T) {
		res, err := c.fs.List(as(t, auth.UserKey, "alice", auth.ThreadKey, "t1", auth.TicketKey, "T-1"), &skillsvcv1.ListRequest{Path: "/"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.GetEntries() {
			got = append(got, e.GetPath())
		}
		if strings.Join(got, ",") != "/skills,/ticket,/workspace" {
			t.Errorf("List(/) with a ticket = %v", got)
		}
	})
}

// TestGlobOptions: GlobRequest's hidden-entry mode and base-name matching
// reach the VFS; unset keeps dot-names matched, as before the options.
func TestGlobOptions(t *testing.T) {
	c := start(t, objstoretest.NewBucket(t, nil), options{})
	ctx := asAlice(t)
	for _, p := range []string{"/workspace/a.md", "/workspace/.cfg/b.md", "/workspace/docs/.c.md"} {
		if _, err := c.fs.Write(ctx, &skillsvcv1.WriteRequest{Path: p, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	explicit := skillsvcv1.GlobHidden_GLOB_HIDDEN_EXPLICIT
	for _, tc := range []struct {
		name string
		req  *skillsvcv1.GlobRequest
		want string
		code codes.Code
	}{
		{"unset", &skillsvcv1.GlobRequest{Pattern: "**/*.md"}, "/workspace/.cfg/b.md,/workspace/a.md,/workspace/docs/.c.md", codes.OK},
		{"include", &skillsvcv1.GlobRequest{Pattern: "**/*.md", Hidden: skillsvcv1.GlobHidden_GLOB_HIDDEN_INCLUDE}, "/workspace/.cfg/b.md,/workspace/a.md,/workspace/docs/.c.md", codes.OK},
		{"explicit", &skillsvcv1.GlobRequest{Pattern: "**/*.md", Hidden: explicit}, "/workspace/a.md", codes.OK},
		{"explicit base name", &skillsvcv1.GlobRequest{Pattern: "*.md", Hidden: explicit, MatchBaseName: true}, "/workspace/.cfg/b.md,/workspace/a.md", codes.OK},
		{"explicit dot base name", &skillsvcv1.GlobRequest{Pattern: ".*.md", Hidden: explicit, MatchBaseName: true}, "/workspace/docs/.c.md", codes.OK},
		{"unknown hidden mode", &skillsvcv1.GlobRequest{Pattern: "*.md", Hidden: 9}, "", codes.InvalidArgument},
		{"base name with a slash", &skillsvcv1.GlobRequest{Pattern: "docs/*.md", MatchBaseName: true}, "", codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Path = "/workspace"
			res, err := c.fs.Glob(ctx, tc.req)
			if status.Code(err) != tc.code {
				t.Fatalf("Glob(%v) err = %v, want %v", tc.req, err, tc.code)
			}
			var got []string
			for _, m := range res.GetMatches() {
				got = append(got, m.GetPath())
			}
			if strings.Join(got, ",") != tc.want {
				t.Errorf("Glob(%v) = %v, want %s", tc.req, got, tc.want)
			}
		})
	}
}
