package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// sharedFiller is how many shared skills stand in path order before the
// relevant one: more than a default block holds.
const sharedFiller = 150

// searchLibrary uploads a library where path order would cut the skill a
// task needs: sharedFiller shared skills under "lib/", the invoice skill
// (named only by its body's words) under "zz/", alice's own skill last in
// path order, a team skill, and alice's copy, under another name, of a
// shared skill.
func searchLibrary(put func(key, body string)) {
	topics := []string{"slides", "diagrams", "translations", "calendars", "tickets", "dashboards", "emails", "surveys"}
	for i := range sharedFiller {
		t := topics[i%len(topics)]
		put(fmt.Sprintf("_shared/skills/lib/skill-%03d/SKILL.md", i), fmt.Sprintf(
			"---\nname: skill-%03d\ndescription: Prepare %s for the quarterly review of team %d, with the house layout, the approved wording and a checklist of what reviewers ask for first.\n---\n# %s\n\nFollow the house layout.\n", i, t, i, t))
	}
	put("_shared/skills/zz/vendor-bills/SKILL.md", "---\nname: vendor-bills\ndescription: Reconcile payables.\n---\n# Three-way match\n\nMatch each supplier bill against its purchase order and the goods receipt before approving payment.\n")
	csv := "description: Clean CSV files, fixing quoting, encodings and delimiters.\n---\n# CSV cleaning\n\nDetect the delimiter, re-encode as UTF-8 and quote fields that hold commas.\n"
	put("_shared/skills/data/csv-clean/SKILL.md", "---\nname: csv-clean\n"+csv)
	put("alice/skills/copies/csv-tidy/SKILL.md", "---\nname: csv-tidy\n"+csv)
	put("alice/skills/zzz-mine/SKILL.md", "---\nname: meeting-minutes\ndescription: Alice's way of writing meeting minutes.\n---\nAgenda, decisions, actions.\n")
	put("_teams/legal/skills/nda/SKILL.md", "---\nname: nda\ndescription: Review non-disclosure agreements for the legal team.\n---\nClauses.\n")
}

// TestSearchEndToEnd runs SearchSkills and FormatSkills through the binary
// over MinIO and Redis with the default limits: the query-aware block holds
// the skill path order would cut, the block without a query lists alice's
// own skills, then her team's, then the organization's; her copy of an
// organization skill is one result naming the other as its alternate;
// warm calls with new queries make no storage request; a second replica
// builds its index from the analyses the first cached, reading no body; a
// changed skill is the only one analyzed again.
func TestSearchEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	searchLibrary(s3Put(t, srv, bucket))
	args := s3Flags(srv, bucket, append(redisFlags(red, "e2e-"+rand.Text()+":"),
		"--skills.index-refresh=1h", "--skills.index-max-stale=1h", "--skills.stale-if-error=1h", "--library.recover-every=1h", noScan)...)
	first := startBinary(t, minioEnv(srv), args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.InTeams(grpctest.AsCaller(ctx, "alice", "t1", ""), "legal")
	sc := skillsvcv1.NewSkillsServiceClient(dial(t, first.addr))

	format := func(sc skillsvcv1.SkillsServiceClient, query string) *skillsvcv1.FormatSkillsResponse {
		t.Helper()
		r, err := sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{Query: query, SearchTool: "search_skills"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Without a query: alice's own, then legal's, then the organization's;
	// the invoice skill is cut.
	plain := format(sc, "").GetText()
	mine, nda, org := strings.Index(plain, "<name>meeting-minutes</name>"), strings.Index(plain, "<name>nda</name>"), strings.Index(plain, "<name>skill-000</name>")
	if mine < 0 || nda < 0 || org < 0 || !(mine < nda && nda < org) {
		t.Errorf("block without a query: own at %d, team at %d, org at %d; want all, in that order:\n%s", mine, nda, org, plain)
	}
	if strings.Contains(plain, "vendor-bills") {
		t.Fatal("the default block holds the invoice skill: the library does not cut it")
	}
	// With the task: the invoice skill first, and the note on searching.
	const task = "approve a supplier bill only after a three-way match with the purchase order"
	r := format(sc, task)
	if !strings.Contains(r.GetText(), "<name>vendor-bills</name>") || strings.Index(r.GetText(), "<skill>") != strings.Index(r.GetText(), "<skill>\n<name>vendor-bills") {
		t.Errorf("block for %q does not start with vendor-bills:\n%s", task, r.GetText())
	}
	if r.GetOmitted() == 0 || !strings.Contains(r.GetText(), "more skills not shown; use search_skills to find them") {
		t.Errorf("block for a task omits %d and says %q: want the rest counted and how to search them", r.GetOmitted(), r.GetText())
	}

	// Alice's copy of csv-clean is served, the organization's named.
	search := func(sc skillsvcv1.SkillsServiceClient, q string) []*skillsvcv1.ScoredSkill {
		t.Helper()
		res, err := sc.SearchSkills(alice, &skillsvcv1.SearchSkillsRequest{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetResults()
	}
	hits := search(sc, "clean up a csv export with the wrong delimiter")
	if len(hits) == 0 || hits[0].GetSkill().GetName() != "csv-tidy" || hits[0].GetSkill().GetLayer() != "user" ||
		len(hits[0].GetAlternates()) != 1 || hits[0].GetAlternates()[0].GetPath() != "/skills/data/csv-clean" || hits[0].GetAlternates()[0].GetLayer() != "shared" {
		t.Fatalf("csv search: %v, want alice's csv-tidy with the shared csv-clean as its alternate", hits)
	}
	for _, h := range hits[1:] {
		if strings.HasPrefix(h.GetSkill().GetName(), "csv-") {
			t.Errorf("the copy %s is a result of its own", h.GetSkill().GetName())
		}
	}

	// Warm: new queries (no kept reply) read nothing from storage.
	m1 := metricsFor(t, first)
	before := m1.storageOps(t)
	if hits := search(sc, "quarterly dashboards"); len(hits) == 0 {
		t.Error("no hit for dashboards")
	}
	format(sc, "translate the survey")
	if d := m1.storageOps(t).since(before); len(d) != 0 {
		t.Errorf("warm SearchSkills and FormatSkills with new queries made storage requests: %v", d)
	}
	analyses := func(m metricsEndpoint, source string) float64 {
		return m.counter(t, `skillsvc_search_analyses_total{source="`+source+`"}`)
	}
	if n := analyses(m1, "analyzed"); n != sharedFiller+5 {
		t.Errorf("first replica analyzed %v skills, want every one once (%d)", n, sharedFiller+5)
	}
	if n := m1.value(t, "skillsvc_search_index_docs"); n != sharedFiller+5 {
		t.Errorf("skillsvc_search_index_docs = %v, want %d", n, sharedFiller+5)
	}
	// The indexes are held on the replica's budget, as its layers are.
	if n, held := m1.value(t, "skillsvc_search_index_bytes"), m1.value(t, `skillsvc_skills_held_bytes{kind="search"}`); n <= 0 || held < n {
		t.Errorf("skillsvc_search_index_bytes = %v, held for kind search %v: want the indexes on the budget", n, held)
	}

	// A second replica over the same Redis: the bodies are not read.
	second := startBinary(t, minioEnv(srv), args...)
	m2 := metricsFor(t, second)
	before = m2.storageOps(t)
	sc2 := skillsvcv1.NewSkillsServiceClient(dial(t, second.addr))
	if hits := search(sc2, "check the goods receipt before paying a supplier"); len(hits) == 0 || hits[0].GetSkill().GetName() != "vendor-bills" {
		t.Errorf("second replica: %v, want vendor-bills first", hits)
	}
	if d := m2.storageOps(t).since(before); d["get"] != 0 || d["get_range"] != 0 {
		t.Errorf("second replica read objects to search: %v", d)
	}
	if n, c := analyses(m2, "analyzed"), analyses(m2, "cached"); n != 0 || c != sharedFiller+5 {
		t.Errorf("second replica: %v skills analyzed here, %v from the cache; want 0 and %d", n, c, sharedFiller+5)
	}

	// A changed shared skill: only it is read and analyzed again.
	put := s3Put(t, srv, bucket)
	put("_shared/skills/lib/skill-007/SKILL.md", "---\nname: skill-007\ndescription: Prepare invoices for customers.\n---\nNew body about invoicing customers.\n")
	adm := skillsvcv1.NewAdminServiceClient(dial(t, first.addr))
	if _, err := adm.DropSkillIndex(ctx, &skillsvcv1.DropSkillIndexRequest{Shared: true}); err != nil {
		t.Fatal(err)
	}
	analyzed, reused := analyses(m1, "analyzed"), analyses(m1, "reused")
	if hits := search(sc, "invoicing customers"); len(hits) == 0 || hits[0].GetSkill().GetName() != "skill-007" {
		t.Errorf("after the change: %v, want skill-007 first", hits)
	}
	if n, k := analyses(m1, "analyzed")-analyzed, analyses(m1, "reused")-reused; n != 1 || k != sharedFiller+1 {
		t.Errorf("after one shared skill changed: %v analyzed, %v reused; want 1 and %d", n, k, sharedFiller+1)
	}

	// JSON over HTTP passes the query.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+first.httpAddr+"/skillsvc.v1.SkillsService/FormatSkills",
		strings.NewReader(`{"query": "`+task+`", "charBudget": 2000}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth.UserKey, "alice")
	req.Header.Set(auth.ThreadKey, "th")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var block struct{ Text string }
	if err := json.Unmarshal(body, &block); err != nil || !strings.Contains(block.Text, "vendor-bills") {
		t.Errorf("FormatSkills over JSON with a query: %s (%v)", body, err)
	}
}
