package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/wellknown"
)

// wkGet is one GET (or another method) of a well-known path as a caller:
// headers are the caller's identity headers or its Authorization.
func wkGet(t *testing.T, base, method, path string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp, body
}

func asUser(user string) map[string]string {
	return map[string]string{"X-Skillsvc-User": user, "X-Skillsvc-Thread": "t1"}
}

// wkIndex fetches and decodes the caller's index.
func wkIndex(t *testing.T, base string, headers map[string]string) (wellknown.Document, []byte, *http.Response) {
	t.Helper()
	resp, body := wkGet(t, base, http.MethodGet, wellknown.Prefix+"index.json", headers)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("index: %s %s", resp.Status, body)
	}
	var doc wellknown.Document
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("index: %v\n%s", err, body)
	}
	return doc, body, resp
}

// rootTar reads a root-layout archive: each file's bytes and mode, in order.
type tarFile struct {
	name string
	mode int64
	body []byte
}

func readTarGz(t *testing.T, b []byte) []tarFile {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header names %q at %v: want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var out []tarFile
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Errorf("%s: type %c, want a regular file", h.Name, h.Typeflag)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarFile{name: h.Name, mode: h.Mode, body: body})
	}
}

// TestWellKnownEndToEndMinIO serves the Agent Skills discovery index on
// the real binary over MinIO with its default limits: each caller's index
// lists its own skills (those the draft can describe), every URL in it
// resolves to bytes whose sha256 is the digest, archives hold the skill's
// files at their root with the modes a folder export gives, the digests
// hold across requests and a restart and change with a file, and the
// HTTP details (ETag and 304, HEAD, 404 and 405 as the JSON API answers).
func TestWellKnownEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/writing/release-notes/SKILL.md", "---\nname: release-notes\ndescription: Write release notes. Use for changelogs.\n---\n# Release notes\nSee references/style.md; run scripts/draft.sh.\n")
	put("alice/skills/writing/release-notes/references/style.md", "# Style\nShort lines.\n")
	put("alice/skills/writing/release-notes/scripts/draft.sh", "#!/bin/sh\necho draft\n")
	put("alice/skills/data/csv-summary/SKILL.md", "---\nname: csv-summary\ndescription: Summarize CSV files.\n---\n# CSV\n")
	// Served by skillsvc under its folder's name, but SKILL.md names it
	// otherwise: the index leaves it out.
	put("alice/skills/legal/escritura/SKILL.md", "---\nname: Escritura de Compraventa\ndescription: Draft a deed of sale.\n---\n# Escritura\n")
	put("bob/skills/ops/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the service.\n---\n# Deploy\nSee notes.md.\n")
	put("bob/skills/ops/deploy/notes.md", "Notes.\n")
	args := s3Flags(srv, bucket)
	p := startBinary(t, minioEnv(srv), args...)
	base := "http://" + p.httpAddr
	conn := dial(t, p.addr)
	ctx := grpctest.AsCaller(context.Background(), "alice", "t1", "")

	alice, aliceBody, resp := wkIndex(t, base, asUser("alice"))
	if got := resp.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("index Content-Type %q", got)
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "private") {
		t.Errorf("index Cache-Control %q: want private", cc)
	}
	if alice.Schema != wellknown.Schema {
		t.Errorf("$schema %q", alice.Schema)
	}
	names := func(d wellknown.Document) []string {
		var out []string
		for _, e := range d.Skills {
			out = append(out, e.Name+":"+e.Type)
		}
		return out
	}
	if got, want := names(alice), []string{"csv-summary:skill-md", "release-notes:archive"}; !slices.Equal(got, want) {
		t.Fatalf("alice's index: %v, want %v\n%s", got, want, aliceBody)
	}
	bob, _, _ := wkIndex(t, base, asUser("bob"))
	if got, want := names(bob), []string{"deploy:archive"}; !slices.Equal(got, want) {
		t.Fatalf("bob's index: %v, want %v", got, want)
	}

	skills := skillsvcv1.NewSkillsServiceClient(conn)
	check := func(t *testing.T, user string, d wellknown.Document) {
		uctx := grpctest.AsCaller(context.Background(), user, "t1", "")
		for _, e := range d.Skills {
			resp, body := wkGet(t, base, http.MethodGet, e.URL, asUser(user))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s %s", e.URL, resp.Status, body)
			}
			sum := sha256.Sum256(body)
			if got := "sha256:" + hex.EncodeToString(sum[:]); got != e.Digest {
				t.Errorf("%s: sha256 %s, the index says %s", e.URL, got, e.Digest)
			}
			got, err := skills.GetSkill(uctx, &skillsvcv1.GetSkillRequest{Path: e.Name})
			if err != nil {
				t.Fatal(err)
			}
			if e.Description != got.GetSkill().GetDescription() {
				t.Errorf("%s: description %q, SKILL.md's %q", e.Name, e.Description, got.GetSkill().GetDescription())
			}
			switch e.Type {
			case "skill-md":
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") || string(body) != got.GetRaw() {
					t.Errorf("%s: %q as %s, want SKILL.md as stored", e.URL, body, resp.Header.Get("Content-Type"))
				}
			case "archive":
				if ct := resp.Header.Get("Content-Type"); ct != "application/gzip" {
					t.Errorf("%s: Content-Type %q", e.URL, ct)
				}
				// The files at the root, byte for byte the manifest's, with
				// the modes of the folder-layout export (the manifest has no
				// modes on this branch).
				files := readTarGz(t, body)
				modes := exportModes(t, uctx, skills, e.Name)
				m := got.GetSkill().GetManifest().GetFiles()
				if len(files) != len(m) {
					t.Fatalf("%s: %d files, the manifest %d", e.URL, len(files), len(m))
				}
				for i, f := range files {
					s := sha256.Sum256(f.body)
					if !strings.HasSuffix(m[i].GetPath(), "/"+f.name) || hex.EncodeToString(s[:]) != m[i].GetSha256() || strings.Contains(f.name, "..") || strings.HasPrefix(f.name, "/") {
						t.Errorf("%s: entry %q (sha256 %x), manifest %s %s", e.URL, f.name, s, m[i].GetPath(), m[i].GetSha256())
					}
					if f.mode != modes[f.name] {
						t.Errorf("%s: %s mode %o, the export's %o", e.URL, f.name, f.mode, modes[f.name])
					}
				}
				if files[0].name != "SKILL.md" && !slices.ContainsFunc(files, func(f tarFile) bool { return f.name == "SKILL.md" }) {
					t.Errorf("%s: no SKILL.md at the root", e.URL)
				}
			}
		}
	}
	check(t, "alice", alice)
	check(t, "bob", bob)
	if modes := exportModes(t, ctx, skills, "release-notes"); modes["scripts/draft.sh"] != 0o755 || modes["SKILL.md"] != 0o644 {
		t.Errorf("export modes %v", modes)
	}

	// Another caller's archive is not served: bob's skill is not alice's.
	if resp, body := wkGet(t, base, http.MethodGet, wellknown.Prefix+"deploy.tar.gz", asUser("alice")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice GET bob's deploy.tar.gz: %s %s", resp.Status, body)
	}

	t.Run("stable, 304", func(t *testing.T) {
		again, body, resp := wkIndex(t, base, asUser("alice"))
		if !bytes.Equal(body, aliceBody) || !slices.Equal(names(again), names(alice)) {
			t.Errorf("a second index differs:\n%s\n%s", aliceBody, body)
		}
		etag := resp.Header.Get("ETag")
		if etag == "" {
			t.Fatal("no ETag")
		}
		h := asUser("alice")
		h["If-None-Match"] = etag
		r304, b304 := wkGet(t, base, http.MethodGet, wellknown.Prefix+"index.json", h)
		if r304.StatusCode != http.StatusNotModified || len(b304) != 0 {
			t.Errorf("If-None-Match %s: %s %q", etag, r304.Status, b304)
		}
		h["If-None-Match"] = `"sha256:0"`
		if r, _ := wkGet(t, base, http.MethodGet, wellknown.Prefix+"index.json", h); r.StatusCode != http.StatusOK {
			t.Errorf("If-None-Match of another ETag: %s", r.Status)
		}
		if r, b := wkGet(t, base, http.MethodHead, wellknown.Prefix+"index.json", asUser("alice")); r.StatusCode != http.StatusOK || len(b) != 0 || r.Header.Get("ETag") != etag {
			t.Errorf("HEAD: %s %q ETag %s", r.Status, b, r.Header.Get("ETag"))
		}
		if r, b := wkGet(t, base, http.MethodHead, wellknown.Prefix+"release-notes.tar.gz", asUser("alice")); r.StatusCode != http.StatusOK || len(b) != 0 || r.Header.Get("Content-Type") != "application/gzip" {
			t.Errorf("HEAD an archive: %s %q %s", r.Status, b, r.Header.Get("Content-Type"))
		}
		// SKILL.md answers with its sha256 as ETag, the index's digest.
		r, _ := wkGet(t, base, http.MethodGet, wellknown.Prefix+"csv-summary/SKILL.md", asUser("alice"))
		if r.Header.Get("ETag") != `"`+alice.Skills[0].Digest+`"` {
			t.Errorf("SKILL.md ETag %s, digest %s", r.Header.Get("ETag"), alice.Skills[0].Digest)
		}
		h["If-None-Match"] = r.Header.Get("ETag")
		if r, b := wkGet(t, base, http.MethodGet, wellknown.Prefix+"csv-summary/SKILL.md", h); r.StatusCode != http.StatusNotModified || len(b) != 0 {
			t.Errorf("SKILL.md If-None-Match: %s %q", r.Status, b)
		}
	})

	t.Run("not found and errors as the JSON API's", func(t *testing.T) {
		for _, path := range []string{"no-such-skill.tar.gz", "no-such-skill/SKILL.md", "release-notes/references/style.md", "Release-Notes.tar.gz", "index.yaml"} {
			resp, body := wkGet(t, base, http.MethodGet, wellknown.Prefix+path, asUser("alice"))
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if resp.StatusCode != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Code != 5 || e.Message == "" {
				t.Errorf("GET %s: %s %s, want 404 with the JSON API's error body", path, resp.Status, body)
			}
		}
		if resp, body := wkGet(t, base, http.MethodPost, wellknown.Prefix+"index.json", asUser("alice")); resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %s %s", resp.Status, body)
		}
		if resp, body := wkGet(t, base, http.MethodGet, wellknown.Prefix+"index.json", nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no identity: %s %s", resp.Status, body)
		}
	})

	// A file changes: its skill's digest changes, the other's does not, and
	// the new archive is the new digest's.
	adm := skillsvcv1.NewAdminServiceClient(conn)
	if _, err := adm.PutLibraryFile(ctx, &skillsvcv1.PutLibraryFileRequest{Library: &skillsvcv1.LibraryRef{User: "alice"},
		Path: "writing/release-notes/references/style.md", Data: []byte("# Style\nShorter lines.\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{User: "alice"}); err != nil {
		t.Fatal(err)
	}
	changed, changedBody, _ := wkIndex(t, base, asUser("alice"))
	digest := func(d wellknown.Document, name string) string {
		for _, e := range d.Skills {
			if e.Name == name {
				return e.Digest
			}
		}
		t.Fatalf("%s not in %v", name, names(d))
		return ""
	}
	if digest(changed, "release-notes") == digest(alice, "release-notes") || digest(changed, "csv-summary") != digest(alice, "csv-summary") {
		t.Errorf("after a change to release-notes: %s", changedBody)
	}
	check(t, "alice", changed)

	// The same content after a restart (no shared cache: the archives are
	// packed again) makes the same index.
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p2 := startBinary(t, minioEnv(srv), args...)
	_, restarted, _ := wkIndex(t, "http://"+p2.httpAddr, asUser("alice"))
	if !bytes.Equal(restarted, changedBody) {
		t.Errorf("after a restart:\n%s\nbefore:\n%s", restarted, changedBody)
	}
}

// exportModes are the tar modes of the skill's folder-layout export, by
// path in the skill.
func exportModes(t *testing.T, ctx context.Context, skills skillsvcv1.SkillsServiceClient, name string) map[string]int64 {
	t.Helper()
	stream, err := skills.ExportSkill(ctx, &skillsvcv1.ExportSkillRequest{Path: name})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b.Write(msg.GetData())
	}
	modes := map[string]int64{}
	for _, f := range readTarGz(t, b.Bytes()) {
		_, rel, _ := strings.Cut(f.name, "/")
		modes[rel] = f.mode
	}
	return modes
}

// TestWellKnownJWTEndToEndMinIO: under token authentication the index is
// refused without a token, as every call is, and served with one.
func TestWellKnownJWTEndToEndMinIO(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	put("alice/skills/data/csv-summary/SKILL.md", "---\nname: csv-summary\ndescription: Summarize CSV files.\n---\n# CSV\n")
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(s3Flags(srv, bucket), hsJWTFlags(f)...)...)
	base := "http://" + p.httpAddr
	for _, h := range []map[string]string{nil, asUser("alice"), {"Authorization": "Bearer not-a-token"}} {
		resp, body := wkGet(t, base, http.MethodGet, wellknown.Prefix+"index.json", h)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"code":16`) {
			t.Errorf("headers %v: %s %s, want 401 with the JSON API's body", h, resp.Status, body)
		}
		if resp, _ := wkGet(t, base, http.MethodGet, wellknown.Prefix+"csv-summary/SKILL.md", h); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("SKILL.md with headers %v: %s", h, resp.Status)
		}
	}
	tok := signToken(t, jwt.SigningMethodHS256, f.secret, agentClaims("alice", "t1", ""))
	doc, _, _ := wkIndex(t, base, map[string]string{"Authorization": "Bearer " + tok})
	if len(doc.Skills) != 1 || doc.Skills[0].Name != "csv-summary" {
		t.Fatalf("alice's index with a token: %+v", doc)
	}
	resp, body := wkGet(t, base, http.MethodGet, doc.Skills[0].URL, map[string]string{"Authorization": "Bearer " + tok})
	sum := sha256.Sum256(body)
	if resp.StatusCode != http.StatusOK || "sha256:"+hex.EncodeToString(sum[:]) != doc.Skills[0].Digest {
		t.Errorf("%s with a token: %s, sha256 %x, digest %s", doc.Skills[0].URL, resp.Status, sum, doc.Skills[0].Digest)
	}
}
