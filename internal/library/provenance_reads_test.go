package library_test

import (
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/memory"
)

// TestProvenanceOneRead: the provenance of a live copy is one read of the
// version record of its digest, whether a version holds it or the copy was
// uploaded out of band (every skill of a library copied into the bucket
// asks for it once per replica, through the provenance index's repair).
func TestProvenanceOneRead(t *testing.T) {
	b := objstore.WrapWithRequestCounting(memory.New())
	e := newEnv(t, b, nil)
	own := layout.LibraryRef{User: "alice"}
	res, err := e.pub.Publish(t.Context(), alice, library.PublishRequest{Name: "pdf", Files: folder("pdf", "One.")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, digest string
		outOfBand    bool
	}{
		{"published", res.Version.ID, false},
		{"out of band", "sha256:" + strings.Repeat("ab", 32), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, n := objstore.CountRequests(t.Context())
			p, err := e.pub.Provenance(ctx, own, "pdf", tc.digest)
			if err != nil || p.OutOfBand != tc.outOfBand {
				t.Fatalf("provenance %+v, %v; want out of band %v", p, err, tc.outOfBand)
			}
			if got := n.Counts(); got != (objstore.RequestCounts{Reads: 1}) {
				t.Errorf("storage requests %+v, want one read", got)
			}
		})
	}
}
