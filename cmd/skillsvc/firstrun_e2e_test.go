package main

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/skillsvc/skillsvc/examples"
	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// exampleSkills are the frontmatter names of the example library's skills.
func exampleSkills(t *testing.T) []string {
	t.Helper()
	var names []string
	err := fs.WalkDir(examples.Skills(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || path.Base(p) != "SKILL.md" {
			return err
		}
		b, err := fs.ReadFile(examples.Skills(), p)
		for line := range strings.Lines(string(b)) {
			if name, ok := strings.CutPrefix(strings.TrimSpace(line), "name: "); ok {
				names = append(names, name)
				break
			}
		}
		return err
	})
	if err != nil || len(names) == 0 {
		t.Fatalf("example skills: %v, %v", names, err)
	}
	return names
}

// formatSkills is alice's prompt block.
func formatSkills(ctx context.Context, t *testing.T, sc skillsvcv1.SkillsServiceClient) *skillsvcv1.FormatSkillsResponse {
	t.Helper()
	resp, err := sc.FormatSkills(grpctest.AsCaller(ctx, "alice", "t1", ""), &skillsvcv1.FormatSkillsRequest{CharBudget: 4000})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestFirstRunShowsExamples follows the quick start: the binary with no
// configuration serves the example library, built in, from the shared
// library of its new data directory, and a skill a user then copies into
// the data directory is served by every call made
// skills.LocalIndexRefresh (the README's "a second") after the copy.
func TestFirstRunShowsExamples(t *testing.T) {
	p := startBinary(t, nil)
	sc := skillsvcv1.NewSkillsServiceClient(dialWithinLimits(t, p.addr))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	block := formatSkills(ctx, t, sc).GetText()
	for _, name := range exampleSkills(t) {
		if !strings.Contains(block, "<name>"+name+"</name>") {
			t.Errorf("the first FormatSkills lacks the example skill %s:\n%s", name, block)
		}
	}
	data := filepath.Join(p.cmd.Dir, "data")
	if _, err := os.Stat(filepath.Join(data, "_shared", "skills", "writing", "release-notes", "SKILL.md")); err != nil {
		t.Errorf("the example library is not in the data directory's shared library: %v", err)
	}

	// Copied in as the README says: a folder under data/<user>/skills/.
	dir := filepath.Join(data, "alice", "skills", "mine", "meeting-notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: meeting-notes\ndescription: Keep meeting notes tidy.\n---\nSummarize the meeting.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	copied := time.Now()
	for {
		called := time.Now()
		if strings.Contains(formatSkills(ctx, t, sc).GetText(), "<name>meeting-notes</name>") {
			break
		}
		if called.Sub(copied) >= skills.LocalIndexRefresh {
			t.Fatalf("a FormatSkills call %v after the copy lacks the copied skill; the README promises it after %v", called.Sub(copied).Round(time.Millisecond), skills.LocalIndexRefresh)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond): // the next call
		}
	}
}

// TestExamplesStayOutOfDeployments: a binary on S3 leaves the shared
// library as it found it unless --examples asks, and then copies the
// example library into an empty one.
func TestExamplesStayOutOfDeployments(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		name  string
		flags []string
		want  bool
	}{
		{"default", nil, false},
		{"asked", []string{"--examples=if-empty"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := srv.NewBucket(t)
			p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), tc.flags...)...)
			sc := skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
			resp := formatSkills(ctx, t, sc)
			if got := resp.GetIncluded() > 0; got != tc.want {
				t.Errorf("FormatSkills included %d skills, want examples %v:\n%s", resp.GetIncluded(), tc.want, resp.GetText())
			}
			objs, err := srv.Client(t).ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket, Prefix: new("_shared/skills/")})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(objs.Contents) > 0; got != tc.want {
				t.Errorf("the bucket's shared library holds %d objects, want examples %v", len(objs.Contents), tc.want)
			}
		})
	}
}
