package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// Team blue's library, which alice (teams red and "bob") must never read.
const (
	blueSkillSecret = "SECRET-BLUE-SKILL-DESC-r5Ha"
	blueSkillBody   = "SECRET-BLUE-SKILL-BODY-k2Wd"
	blueSkillFile   = "SECRET-BLUE-SKILL-FILE-u7Pc"
)

// blueSkillRefs spell team blue's skill every way a member of other teams
// could, from names to paths reaching out of the skills mount into the
// team prefix.
var blueSkillRefs = []targetPair{
	{"%s", "blueskill", "nothing"},
	{"cat/%s", "blueskill", "nothing"},
	{"/skills/cat/%s", "blueskill", "nothing"},
	{"/skills/cat/%s/SKILL.md", "blueskill", "nothing"},
	{"../_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"../../_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"/skills/../../_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"/_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"/skills/..%%2f_teams/blue/skills/cat/%s", "blueskill", "nothing"},
	{"team:blue/cat/%s", "blueskill", "nothing"},
}

var blueFileTargets = []targetPair{
	{"/skills/cat/blueskill/%s", "ref.md", "nope.md"},
	{"/skills/../_teams/blue/skills/cat/blueskill/%s", "ref.md", "nope.md"},
	{"/workspace/../../../_teams/blue/skills/cat/blueskill/%s", "ref.md", "nope.md"},
	{"/_teams/blue/skills/cat/blueskill/%s", "ref.md", "nope.md"},
}

// TestTeamIsolationEndToEnd extends the isolation matrix to team
// libraries: alice's token names teams red and "bob"; she reads red's
// skills, but nothing of team blue's through any SkillsService or
// FilesystemService RPC in any spelling, nor when her metadata claims team
// blue (jwt mode takes teams from the token alone); and the team ID "bob"
// reaches the team library _teams/bob/, never user bob's library.
func TestTeamIsolationEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	put := s3Put(t, srv, bucket)
	seedIsolation(put)
	put("_teams/blue/skills/cat/blueskill/SKILL.md", "---\nname: blueskill\ndescription: Zanzibar tasks for team blue, "+blueSkillSecret+".\n---\nmarker "+blueSkillBody+"\n")
	put("_teams/blue/skills/cat/blueskill/ref.md", "marker "+blueSkillFile+"\n")
	put("_teams/red/skills/redcat/redskill/SKILL.md", "---\nname: redskill\ndescription: Team red's skill.\n---\nRED-OWN\n")
	f := newJWTFixture(t)
	p := startBinary(t, minioEnv(srv), append(srv.S3Flags(bucket), hsJWTFlags(f)...)...)
	conn := dialWithinLimits(t, p.addr)
	e := isolationEnv{fsc: skillsvcv1.NewFilesystemServiceClient(conn), sc: skillsvcv1.NewSkillsServiceClient(conn)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	claims := agentClaims("alice", "t1", "K1")
	claims["teams"] = []string{"red", "bob"}
	alice := grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, claims))
	spoofed := grpctest.InTeams(alice, "blue,red,bob")
	guarded := []string{"bob/", "_teams/blue/"}
	before := bucketState(t, srv, bucket, guarded...)

	for label, c := range map[string]context.Context{"alice": alice, "alice claiming blue": spoofed} {
		// Positive control: her own skill and team red's, nothing else.
		if names, err := skillNames(c, e.sc); err != nil || names != "aliceskill,redskill" {
			t.Fatalf("%s: ListSkills = %q, %v; want aliceskill,redskill", label, names, err)
		}
		ip := isolationProbe{t: t}
		for _, call := range e.skillCalls() {
			for _, tp := range append(blueSkillRefs, targetPair{"%s", "bobskill", "nothing"}, targetPair{"/skills/cat/%s", "bobskill", "nothing"}) {
				ip.attempt(c, label, call, tp)
			}
		}
		for _, call := range e.readOnlyFSCalls() {
			for _, tp := range blueFileTargets {
				ip.attempt(c, label, call, tp)
			}
		}
		for _, call := range e.categoryCalls() {
			ip.attempt(c, label, call, targetPair{"%s", "cat", "nothing"})
		}
		for _, q := range []targetPair{{"%s", "blueskill", "nothing"}, {"%s", "zanzibar", "qwertyuiop"}} {
			ip.attempt(c, label, e.searchCall(), q)
		}
		list, err := e.sc.ListSkills(c, &skillsvcv1.ListSkillsRequest{IncludeInvalid: true, IncludeDisabled: true, PageSize: 1000})
		ip.checkLeak(label+" ListSkills", rpcAnswer{protoText(list), err})
		block, err := e.sc.FormatSkills(c, &skillsvcv1.FormatSkillsRequest{})
		ip.checkLeak(label+" FormatSkills", rpcAnswer{protoText(block), err})
		if err != nil || !strings.Contains(block.GetText(), "redskill") || strings.Contains(block.GetText(), "blueskill") {
			t.Errorf("%s: FormatSkills = %q, %v", label, block.GetText(), err)
		}
		gr, err := e.fsc.Grep(c, &skillsvcv1.GrepRequest{Path: "/", Pattern: "marker"})
		ip.checkLeak(label+" Grep /", rpcAnswer{protoText(gr), err})
		gl, err := e.fsc.Glob(c, &skillsvcv1.GlobRequest{Path: "/skills", Pattern: "**"})
		ip.checkLeak(label+" Glob /skills **", rpcAnswer{protoText(gl), err})
		for _, m := range gl.GetMatches() {
			if !strings.HasPrefix(m.GetPath(), "/skills/mine/") && !strings.HasPrefix(m.GetPath(), "/skills/redcat/") {
				t.Errorf("%s: Glob /skills ** matched %q", label, m.GetPath())
			}
		}
	}
	if after := bucketState(t, srv, bucket, guarded...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("objects of bob or team blue changed:\nbefore %v\nafter  %v", before, after)
	}
}
