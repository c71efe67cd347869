package app_test

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/auth"
	"github.com/skillsvc/skillsvc/internal/cache"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/s3"
	"github.com/skillsvc/skillsvc/internal/server"
	"github.com/skillsvc/skillsvc/internal/skills"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/testserver"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// usageRig is the production assembly (NewServices) over MinIO with usage
// flushed to a real Redis, a SkillsService over its reply cache, and a
// second recorder on the same Redis (another replica) whose Flush the test
// calls.
type usageRig struct {
	t       *testing.T
	skills  *server.Skills
	ranks   *usage.Ranks
	replica *usage.Aggregator
	ctx     context.Context
}

// orderSkills: alice's own three, her team red's two, the organization's
// three, each layer's in path order.
var orderSkills = []string{"own-a", "own-b", "own-c", "tm-a", "tm-b", "sh-a", "sh-b", "sh-c"}

func newUsageRig(t *testing.T, redisAddr string, tune func(*skills.Config), timeout time.Duration) *usageRig {
	t.Helper()
	minio := testserver.SharedMinIO(t)
	bucket := s3.NewWithClient(minio.Client(t), minio.NewBucket(t))
	b := skillstest.New()
	b.User("alice").Skill("own-a", "", "Own skill a for tests.", "a").Skill("own-b", "", "Own skill b for tests.", "b").Skill("own-c", "", "Own skill c for tests.", "c")
	b.Team("red").Skill("tm-a", "", "Team skill a for tests.", "a").Skill("tm-b", "", "Team skill b for tests.", "b")
	b.Shared().Skill("sh-a", "", "Shared skill a for tests.", "a").Skill("sh-b", "", "Shared skill b for tests.", "b").Skill("sh-c", "", "Shared skill c for tests.", "c")
	// A search's ties: the same words, as many, in two skills; one more
	// relevant than both.
	b.Shared().Skill("inv-top", "", "Invoice invoice totals checked twice here.", "x").
		Skill("inv-y", "", "Invoice ledger quarterly archive.", "y").Skill("inv-z", "", "Invoice payroll monthly summary.", "z")
	b.Put(t, bucket)

	cfg := app.DefaultConfig()
	rc := cache.DefaultConfig().Redis
	rc.Addrs = []string{redisAddr}
	rc.Keyspace = cache.NewKeyspace("usageorder-" + rand.Text()) // each rig its own counts
	rc.DialTimeout, rc.ReadTimeout, rc.WriteTimeout, rc.PoolTimeout = timeout, timeout, timeout, timeout
	red, err := cache.NewRedis(rc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = red.Close() })
	client, prefix := red.Commands("usage")
	store := usage.NewRedisStore(client, prefix, cfg.Usage)

	lib := skillstest.Library(t, bucket, func(c *skills.Config) {
		skillstest.Indexed(time.Hour)(c) // replies kept, as a deployment keeps them
		if tune != nil {
			tune(c)
		}
	})
	t.Cleanup(lib.Close)
	s, err := app.NewServices(cfg, app.Parts{Bucket: bucket, Lib: lib, UsageStore: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	replica := usage.NewRecorder(cfg.Usage, store)
	t.Cleanup(replica.Close)
	id := mounts.Default().MustIdentify(mounts.Identity{User: "alice", Thread: "t1", Teams: "red"})
	return &usageRig{
		t: t, skills: server.NewSkills(lib, 64<<10, server.WithReplies(s.Replies)), ranks: s.UsageRanks, replica: replica,
		ctx: auth.NewContext(t.Context(), auth.Principal{Caller: id}),
	}
}

// activate records n activations of skill in layer, flushed to Redis.
func (r *usageRig) activate(layer, skill string, n int) {
	for range n {
		r.replica.Record(r.ctx, usage.Event{Kind: usage.Activation, Skill: skill, Layer: layer, Version: "v1", User: "alice", Teams: []string{"red"}, Thread: "t1", Surface: "grpc"})
	}
	if err := r.replica.Flush(r.ctx); err != nil {
		r.t.Fatal(err)
	}
}

// block is the order of orderSkills in alice's prompt block.
func (r *usageRig) block() []string {
	r.t.Helper()
	res, err := r.skills.FormatSkills(r.ctx, &skillsvcv1.FormatSkillsRequest{})
	if err != nil {
		r.t.Fatal(err)
	}
	return order(decoded(r.t, res).GetText(), orderSkills)
}

// search is the names SearchSkills answers "invoice" with.
func (r *usageRig) search() []string {
	r.t.Helper()
	res, err := r.skills.SearchSkills(r.ctx, &skillsvcv1.SearchSkillsRequest{Query: "invoice"})
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, h := range decoded(r.t, res).GetResults() {
		out = append(out, h.GetSkill().GetName())
	}
	return out
}

// until is get's answer once the ranks have read what was flushed: the
// first ask starts their reads (answering from what they held), the second
// sees what the reads found.
func (r *usageRig) until(what string, get func() []string, want []string) {
	r.t.Helper()
	r.ranks.Forget()
	get()
	r.ranks.Wait()
	if got := get(); !slices.Equal(got, want) {
		r.t.Fatalf("%s: %v, want %v", what, got, want)
	}
}

// decoded is m as a client decodes it: the handlers answer encoded bytes
// (kept replies) as m's unknown fields.
func decoded[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// order is names in the order text first mentions them.
func order(text string, names []string) []string {
	out := slices.Clone(names)
	at := func(n string) int { return strings.Index(text, "<name>"+n+"</name>") }
	slices.SortStableFunc(out, func(a, b string) int { return at(a) - at(b) })
	for _, n := range out {
		if at(n) < 0 {
			return append(out, "missing:"+n)
		}
	}
	return out
}

// TestPromptOrderByUse: a prompt block without a query orders each layer's
// skills by their activations as recorded by the real recorder and read
// back from Redis (ties and unused skills in path order; a user's own
// first, then the team's, then the organization's, whatever the counts);
// the kept reply follows the new order each time it changes; with
// --skills.order-by-use=false the block keeps the path order.
func TestPromptOrderByUse(t *testing.T) {
	addr := testserver.SharedRedis(t).Addr
	t.Run("on", func(t *testing.T) {
		r := newUsageRig(t, addr, nil, 2*time.Second)
		r.until("before any use", r.block, orderSkills) // kept under the key of no use
		r.activate(skillview.LayerUser, "own-c", 3)
		r.activate(skillview.LayerUser, "own-b", 1)
		r.activate(skillview.LayerTeam+"red", "tm-b", 1)
		r.activate(skillview.LayerShared, "sh-b", 9)
		r.until("after use", r.block, []string{"own-c", "own-b", "own-a", "tm-b", "tm-a", "sh-b", "sh-a", "sh-c"})
		r.activate(skillview.LayerUser, "own-a", 5)
		r.until("after more use", r.block, []string{"own-a", "own-c", "own-b", "tm-b", "tm-a", "sh-b", "sh-a", "sh-c"})
	})
	t.Run("off", func(t *testing.T) {
		r := newUsageRig(t, addr, func(c *skills.Config) { c.OrderByUse = false }, 2*time.Second)
		r.activate(skillview.LayerUser, "own-c", 3)
		r.activate(skillview.LayerShared, "sh-c", 3)
		r.until("order-by-use off", r.block, orderSkills)
	})
}

// TestSearchUsePrior: recent use breaks a search's ties (equal relevance,
// one layer) and never reorders distinct scores; off, ties keep their order.
func TestSearchUsePrior(t *testing.T) {
	addr := testserver.SharedRedis(t).Addr
	for _, on := range []bool{true, false} {
		r := newUsageRig(t, addr, func(c *skills.Config) { c.SearchUsePrior = on }, 2*time.Second)
		res, err := r.skills.SearchSkills(r.ctx, &skillsvcv1.SearchSkillsRequest{Query: "invoice"})
		if err != nil {
			t.Fatal(err)
		}
		hits := decoded(t, res).GetResults()
		if len(hits) != 3 || hits[0].GetSkill().GetName() != "inv-top" || hits[1].GetRelevance() != hits[2].GetRelevance() ||
			hits[1].GetScore() != hits[2].GetScore() || hits[0].GetScore() == hits[1].GetScore() {
			t.Fatalf("the fixture's hits are not one best and a tie: %v", hits)
		}
		before := []string{"inv-top", hits[1].GetSkill().GetName(), hits[2].GetSkill().GetName()}
		r.activate(skillview.LayerShared, before[2], 20) // the tie's second, far more than the best
		want := before
		if on {
			want = []string{"inv-top", before[2], before[1]}
		}
		r.until("search", r.search, want)
	}
}

// TestPromptOrderRedisDown: with Redis hung, a prompt block is answered
// at once in path order (the ranks' read waits in the background; the
// client's timeouts are an hour, so a block that waited would not come);
// once Redis is gone, the failed read leaves the path order.
func TestPromptOrderRedisDown(t *testing.T) {
	red := testserver.StartRestartableRedis(t)
	r := newUsageRig(t, red.Addr, nil, time.Hour)
	r.activate(skillview.LayerUser, "own-c", 3)
	r.activate(skillview.LayerShared, "sh-c", 3)
	red.Pause(t)
	for range 3 {
		if got := r.block(); !slices.Equal(got, orderSkills) {
			t.Fatalf("Redis hung: %v, want path order %v", got, orderSkills)
		}
	}
	red.Stop(t)
	r.ranks.Wait()
	r.until("Redis down", r.block, orderSkills)
}
