package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestKeyspacePerDeployment runs two deployments on two buckets that share
// one Redis under the same (default) key prefix, each with a library for
// the same user at the same paths: each serves only its own bucket's
// catalog, prompt block and settings, however the other filled Redis first.
// Before the keyspace, the second was served the first's skill names,
// descriptions and disabled skills.
func TestKeyspacePerDeployment(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	type deployment struct {
		name, only, shared string
		sc                 skillsvcv1.SkillsServiceClient
		metrics            metricsEndpoint
	}
	deps := []*deployment{{name: "A", only: "alpha-secret", shared: "csv"}, {name: "B", only: "beta-secret", shared: "tsv"}}
	for _, d := range deps {
		bucket := srv.NewBucket(t)
		put := s3Put(t, srv, bucket)
		put("alice/skills/notes/SKILL.md", "---\nname: notes\ndescription: "+d.name+"'s meeting notes.\n---\nSummarize.\n")
		put("alice/skills/"+d.only+"/SKILL.md", "---\nname: "+d.only+"\ndescription: Only "+d.name+" has it.\n---\nBody.\n")
		put("_shared/skills/"+d.shared+"/SKILL.md", "---\nname: "+d.shared+"\ndescription: "+d.name+"'s shared skill.\n---\nBody.\n")
		// Production defaults but for the storage and Redis's address: the
		// default key prefix, as two deployments left to it have.
		p := startBinary(t, minioEnv(srv), s3Flags(srv, bucket, "--cache.redis.addrs="+red.Addr)...)
		d.sc = skillsvcv1.NewSkillsServiceClient(dial(t, p.addr))
		d.metrics = metricsFor(t, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	names := func(d *deployment, want string) {
		t.Helper()
		if got, err := skillNames(alice, d.sc); err != nil || got != want {
			t.Fatalf("%s lists %q, %v; want %q (its own bucket's)", d.name, got, err, want)
		}
	}
	a, b := deps[0], deps[1]
	// A fills Redis first; B then finds the same keys there.
	names(a, "alpha-secret,csv,notes")
	names(b, "beta-secret,notes,tsv")
	for _, d := range deps {
		other := deps[0]
		if d == other {
			other = deps[1]
		}
		resp, err := d.sc.FormatSkills(alice, &skillsvcv1.FormatSkillsRequest{})
		if err != nil {
			t.Fatalf("%s FormatSkills: %v", d.name, err)
		}
		if txt := resp.GetText(); !strings.Contains(txt, d.name+"'s meeting notes") || strings.Contains(txt, other.name+"'s") || strings.Contains(txt, other.only) {
			t.Fatalf("%s's prompt block is not its own:\n%s", d.name, txt)
		}
	}
	// A disabled skill in one deployment is not disabled in the other.
	if _, err := a.sc.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "notes", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.sc.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: b.only, Enabled: false}); err != nil {
		t.Fatal(err)
	}
	names(a, "alpha-secret,csv")
	names(b, "notes,tsv")
	names(a, "alpha-secret,csv")
	for _, d := range deps {
		if n := d.metrics.counter(t, "skillsvc_cache_foreign_values_total"); n != 0 {
			t.Errorf("%s refused %v values of another deployment; its keys are its own, so it should find none", d.name, n)
		}
	}
}

// TestKeyspaceSpellingsShare: two replicas of one deployment naming its
// MinIO in two spellings (case, a trailing slash, path-style or not) log
// one keyspace and the normalized storage, and a change on one is seen on
// the other through the replicas' topic, although each holds settings in
// process for an hour.
func TestKeyspaceSpellingsShare(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	red := testserver.SharedRedis(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	common := append(redisFlags(red, newKeyPrefix()), "--metrics.listen=127.0.0.1:0", "--skills.index-refresh=1h", "--skills.index-max-stale=1h", noScan,
		"--storage=s3", "--s3.bucket="+bucket, "--s3.region="+srv.Region)
	a := startBinary(t, minioEnv(srv), append(common, "--s3.endpoint="+srv.Endpoint, "--s3.path-style")...)
	b := startBinary(t, minioEnv(srv), append(common, "--s3.endpoint="+strings.ToUpper(srv.Endpoint)+"/", "--s3.path-style=false")...)
	keyspace := func(p *proc) string {
		t.Helper()
		for line := range strings.Lines(p.output()) {
			if strings.Contains(line, `"msg":"cache keyspace"`) {
				if !strings.Contains(line, `"storage":"s3 `+strings.ToLower(srv.Endpoint)+` bucket `+bucket+`"`) {
					t.Errorf("the keyspace line does not name the normalized storage: %s", line)
				}
				_, k, _ := strings.Cut(line, `"keyspace":"`)
				k, _, _ = strings.Cut(k, `"`)
				return k
			}
		}
		t.Fatalf("no keyspace logged:\n%s", p.output())
		return ""
	}
	if ka, kb := keyspace(a), keyspace(b); ka == "" || ka != kb {
		t.Fatalf("keyspaces %q and %q: want one", ka, kb)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	scA := skillsvcv1.NewSkillsServiceClient(dial(t, a.addr))
	scB := skillsvcv1.NewSkillsServiceClient(dial(t, b.addr))
	for _, sc := range []skillsvcv1.SkillsServiceClient{scA, scB} {
		if got, err := skillNames(alice, sc); err != nil || got != allSkills {
			t.Fatalf("lists %q, %v; want %q", got, err, allSkills)
		}
	}
	if _, err := scA.SetSkillEnabled(alice, &skillsvcv1.SetSkillEnabledRequest{Path: "pdf", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, 30*time.Second, "B listing A's change", func() bool {
		got, err := skillNames(alice, scB)
		return err == nil && got == "csv,notes"
	})
}

// TestKeyspaceFromSDKEndpoint: a deployment naming its MinIO only through
// the SDK's environment (AWS_ENDPOINT_URL_S3, no --s3.endpoint) serves it
// and logs the keyspace of that store, the one a replica given the flag
// logs; a deployment on another store named the same way logs another.
// Before, both computed AWS's keyspace for the bucket name and shared it.
func TestKeyspaceFromSDKEndpoint(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	putLibrary(s3Put(t, srv, bucket))
	common := []string{noScan, "--storage=s3", "--s3.bucket=" + bucket, "--s3.region=" + srv.Region, "--s3.path-style"}
	byFlag := startBinary(t, minioEnv(srv), append(common, "--s3.endpoint="+srv.Endpoint)...)
	byEnv := startBinary(t, minioEnv(srv, "AWS_ENDPOINT_URL_S3="+srv.Endpoint), common...)
	// Another store named by the environment: MinIO by a host name the
	// normalization does not take for its IP address (another server, as
	// far as the keyspace can tell), so the start's storage check passes.
	other := strings.Replace(srv.Endpoint, "127.0.0.1", "localhost", 1)
	byOtherEnv := startBinary(t, minioEnv(srv, "AWS_ENDPOINT_URL_S3="+other), common...)
	logged := func(p *proc) (keyspace, storage string) {
		t.Helper()
		for line := range strings.Lines(p.output()) {
			var rec struct{ Msg, Keyspace, Storage string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "cache keyspace" {
				return rec.Keyspace, rec.Storage
			}
		}
		t.Fatalf("no keyspace logged:\n%s", p.output())
		return "", ""
	}
	kFlag, _ := logged(byFlag)
	kEnv, storage := logged(byEnv)
	if want := "s3 " + strings.ToLower(srv.Endpoint) + " bucket " + bucket; storage != want {
		t.Errorf("logged storage %q, want %q (the store the client reaches, not AWS)", storage, want)
	}
	if kEnv == "" || kEnv != kFlag {
		t.Errorf("keyspaces %q (AWS_ENDPOINT_URL_S3) and %q (--s3.endpoint): want one, the same store", kEnv, kFlag)
	}
	if kOther, storage := logged(byOtherEnv); kOther == kEnv || storage != "s3 "+other+" bucket "+bucket {
		t.Errorf("another store by AWS_ENDPOINT_URL_S3 logs keyspace %q (storage %q), want one other than %q", kOther, storage, kEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	if got, err := skillNames(alice, skillsvcv1.NewSkillsServiceClient(dial(t, byEnv.addr))); err != nil || got != allSkills {
		t.Fatalf("the replica configured by the environment lists %q, %v; want %q", got, err, allSkills)
	}
}
