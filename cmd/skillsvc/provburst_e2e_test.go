package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/grpctest"
	"github.com/skillsvc/skillsvc/internal/testserver"
)

// TestProvenanceBurstEndToEnd: two replicas on one MinIO bucket, default
// limits; alice publishes 32 skills at once through each, all into her own
// library. Then a third replica (a fresh copy of the index) lists them with
// include_provenance and gets each: every one shows its published version,
// none out of band; and each publishing replica wrote the library's index
// fewer times than it published (the changes queued while a write ran went
// into its next one).
func TestProvenanceBurstEndToEnd(t *testing.T) {
	srv := testserver.SharedMinIO(t)
	bucket := srv.NewBucket(t)
	const perReplica = 32
	replicas := []*proc{startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...), startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	alice := grpctest.AsCaller(ctx, "alice", "t1", "")
	versions := make([]string, 2*perReplica)
	var g errgroup.Group
	for r, p := range replicas {
		lib := skillsvcv1.NewLibraryServiceClient(dial(t, p.addr))
		for i := range perReplica {
			k := r*perReplica + i
			g.Go(func() error {
				name := fmt.Sprintf("burst-%02d", k)
				res, err := pushFolder(alice, lib, &skillsvcv1.PublishSkillHeader{Name: name},
					map[string]string{"SKILL.md": skillMDOf(name, fmt.Sprintf("Handle case %d of the burst.", k), "Do it.\n")})
				versions[k] = res.GetVersion().GetId()
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, p := range replicas {
		m := metricsFor(t, p)
		writes := m.value(t, `skillsvc_library_provenance_index_writes_total{result="ok"}`) + m.value(t, `skillsvc_library_provenance_index_writes_total{result="kept"}`)
		t.Logf("%d publishes through one replica: %v writes of the library's provenance index", perReplica, writes)
		if writes < 1 || writes >= perReplica {
			t.Errorf("%v index writes for %d publishes on one replica: want at least 1 and fewer than %d", writes, perReplica, perReplica)
		}
	}

	reader := startBinary(t, minioEnv(srv), s3Flags(srv, bucket)...)
	sk := skillsvcv1.NewSkillsServiceClient(dial(t, reader.addr))
	res, err := sk.ListSkills(alice, &skillsvcv1.ListSkillsRequest{IncludeProvenance: true, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]*skillsvcv1.Provenance{}
	for _, s := range res.GetSkills() {
		listed[s.GetName()] = s.GetProvenance()
	}
	for k, v := range versions {
		name := fmt.Sprintf("burst-%02d", k)
		want := &skillsvcv1.Provenance{Version: v, Publisher: "alice", ScanVerdict: "clean", Signature: "unsigned"}
		if got := listed[name]; got.GetVersion() != v || got.GetOutOfBand() || got.GetPublisher() != "alice" {
			t.Errorf("ListSkills: %s's provenance = %v, want %v", name, got, want)
		}
		g, err := sk.GetSkill(alice, &skillsvcv1.GetSkillRequest{Path: name})
		if err != nil {
			t.Fatal(err)
		}
		if got := g.GetProvenance(); got.GetVersion() != v || got.GetOutOfBand() {
			t.Errorf("GetSkill: %s's provenance = %v, want %v", name, got, want)
		}
	}
}
