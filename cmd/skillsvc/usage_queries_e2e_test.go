package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/protobuf/encoding/protojson"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestUsageQueriesKAnonymousEndToEnd: in jwt mode on MinIO and Redis, a
// query that fewer than --usage.query-min-users (default 5) distinct users
// searched keeps its text out of the organization's and the team's
// reports, read by their admins: it is summed into the other searches
// row; a query 5 users searched shows. Each searcher's own report shows
// their query.
func TestUsageQueriesKAnonymousEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	f := newJWTFixture(t)
	flags := append(s3Flags(srv, bucket, redisFlags(red, newKeyPrefix())...), hsJWTFlags(f)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	as := func(user string, admin bool) context.Context {
		c := agentClaims(user, "t1", "")
		c["teams"] = []string{"legal"}
		if admin {
			c["scope"] = "skillsvc:admin"
		}
		return grpctest.WithBearer(ctx, signToken(t, jwt.SigningMethodHS256, f.secret, c))
	}
	const secret, common = "acme merger password hunter2", "contract review"

	first := startBinary(t, minioEnv(srv), flags...)
	sk := skillsvcv1.NewSkillsServiceClient(dial(t, first.addr))
	for i := range 5 {
		user := as(fmt.Sprint("user", i), false)
		queries := []string{common}
		if i < 4 {
			queries = append(queries, secret, secret) // twice: still one user
		}
		for _, q := range queries {
			if _, err := sk.SearchSkills(user, &skillsvcv1.SearchSkillsRequest{Query: q}); err != nil {
				t.Fatal(err)
			}
		}
	}
	uc := flushedUsage(t, srv, first, flags)
	for _, c := range []struct {
		name string
		ctx  context.Context
		lib  *skillsvcv1.LibraryRef
	}{
		{"the organization's, to an admin", as("ops", true), &skillsvcv1.LibraryRef{Shared: true}},
		{"the team's, to its admin", as("lena", true), &skillsvcv1.LibraryRef{Team: "legal"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp, err := uc.GetUsage(c.ctx, &skillsvcv1.GetUsageRequest{Library: c.lib, Days: 1})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := protojson.Marshal(resp)
			if strings.Contains(string(raw), "hunter2") || strings.Contains(string(raw), "acme") {
				t.Errorf("the report shows a query 4 users searched: %s", raw)
			}
			if o := resp.GetOtherSearches(); o.GetSearches() != 8 || o.GetQuery() != "" {
				t.Errorf("other searches %v, want the 8 searches of the withheld query", o)
			}
			if len(resp.GetSearches()) != 1 || resp.GetSearches()[0].GetQuery() != common || resp.GetSearches()[0].GetSearches() != 5 {
				t.Errorf("searches %v, want %q by 5 users", resp.GetSearches(), common)
			}
			if resp.GetQueryMinUsers() != 5 {
				t.Errorf("query_min_users %d, want 5", resp.GetQueryMinUsers())
			}
		})
	}
	own, err := uc.GetUsage(as("user0", false), &skillsvcv1.GetUsageRequest{Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, q := range own.GetSearches() {
		found = found || (q.GetQuery() == secret && q.GetSearches() == 2)
	}
	if !found || own.GetOtherSearches() != nil {
		t.Errorf("user0's own searches %v (other %v), want %q twice, nothing withheld", own.GetSearches(), own.GetOtherSearches(), secret)
	}
}
