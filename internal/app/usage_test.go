package app_test

import (
	"testing"
	"time"

	"github.com/skillsvc/skillsvc/internal/app"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
	"github.com/skillsvc/skillsvc/internal/skills/skillstest"
	"github.com/skillsvc/skillsvc/internal/skillview"
	"github.com/skillsvc/skillsvc/internal/usage"
)

// TestServicesUsage: NewServices builds one usage recorder and its reader
// (in process without Redis), and Close flushes what was recorded; with
// --usage.enabled=false nothing is recorded.
func TestServicesUsage(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		cfg := app.DefaultConfig()
		cfg.Usage.Enabled = enabled
		bucket := memory.New()
		lib := skillstest.Library(t, bucket, nil)
		s, err := app.NewServices(cfg, app.Parts{Bucket: bucket, Lib: lib})
		if err != nil {
			t.Fatal(err)
		}
		if !enabled {
			if s.Usage != usage.Nop || s.UsageReader != nil {
				t.Fatalf("usage off: recorder %T, reader %v", s.Usage, s.UsageReader)
			}
			s.Close()
			continue
		}
		s.Usage.Record(t.Context(), usage.Event{Kind: usage.Activation, Skill: "pdf", Layer: skillview.LayerUser, Version: "v1", User: "alice", Thread: "t1", Surface: "grpc"})
		s.Close()
		c, err := mounts.Default().Identify(mounts.Identity{User: "alice", Thread: "t1"})
		if err != nil {
			t.Fatal(err)
		}
		today := usage.DayOf(time.Now())
		rep, err := s.UsageReader.Read(t.Context(), usage.Own(c), today, today)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Skills) != 1 || rep.Skills[0].Activations != 1 {
			t.Fatalf("read back %+v, want pdf's one activation", rep.Skills)
		}
	}
}
