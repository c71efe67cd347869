package provenance

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/signing"
)

// TestSplice: the origins of an encoded ListSkills or SearchSkills reply's
// summaries are read in order (folder, layer, manifest digest), and each
// summary gets its provenance, the reply otherwise as it was; the kept
// bytes are not written; a nil provenance leaves its summary as it is.
func TestSplice(t *testing.T) {
	a := &skillsvcv1.SkillSummary{Path: "/skills/docs/pdf", Name: "pdf", Layer: "shared", ManifestDigest: "sha256:aa", Warnings: []string{"w"}}
	b := &skillsvcv1.SkillSummary{Path: "/skills/notes", Name: "notes", Layer: "user", Metadata: map[string]string{"k": "v"}}
	pa := &skillsvcv1.Provenance{Version: "sha256:aa", Publisher: "alice", ScanVerdict: "clean", Signature: "unsigned"}
	pb := &skillsvcv1.Provenance{ScanVerdict: "high", Signature: "unsigned", OutOfBand: true}
	wantOrigins := []Origin{{Folder: "pdf", Layer: "shared", Digest: "sha256:aa"}, {Folder: "notes", Layer: "user"}}
	with := func(s *skillsvcv1.SkillSummary, p *skillsvcv1.Provenance) *skillsvcv1.SkillSummary {
		s = proto.Clone(s).(*skillsvcv1.SkillSummary)
		s.Provenance = p
		return s
	}
	for _, tc := range []struct {
		name     string
		at       []protowire.Number
		reply    proto.Message
		ps       []*skillsvcv1.Provenance
		want     proto.Message
		newReply func() proto.Message
	}{
		{"ListSkills", ListSkills,
			&skillsvcv1.ListSkillsResponse{Skills: []*skillsvcv1.SkillSummary{a, b}, NextPageToken: "next", LibraryDigest: "sha256:lib"},
			[]*skillsvcv1.Provenance{pa, pb},
			&skillsvcv1.ListSkillsResponse{Skills: []*skillsvcv1.SkillSummary{with(a, pa), with(b, pb)}, NextPageToken: "next", LibraryDigest: "sha256:lib"},
			func() proto.Message { return &skillsvcv1.ListSkillsResponse{} }},
		{"SearchSkills", SearchSkills,
			&skillsvcv1.SearchSkillsResponse{Results: []*skillsvcv1.ScoredSkill{
				{Skill: a, Score: 2, Relevance: 0.5, Alternates: []*skillsvcv1.SkillAlternate{{Path: "/skills/x", Name: "x", Layer: "user"}}},
				{Skill: b, Score: 1},
			}, Truncated: true},
			[]*skillsvcv1.Provenance{pa, nil},
			&skillsvcv1.SearchSkillsResponse{Results: []*skillsvcv1.ScoredSkill{
				{Skill: with(a, pa), Score: 2, Relevance: 0.5, Alternates: []*skillsvcv1.SkillAlternate{{Path: "/skills/x", Name: "x", Layer: "user"}}},
				{Skill: b, Score: 1},
			}, Truncated: true},
			func() proto.Message { return &skillsvcv1.SearchSkillsResponse{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, err := proto.Marshal(tc.reply)
			if err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(kept)
			origins, err := Origins(kept, tc.at)
			if err != nil || !slices.Equal(origins, wantOrigins) {
				t.Fatalf("Origins = %v, %v; want %v", origins, err, wantOrigins)
			}
			out, err := Splice(kept, tc.at, tc.ps)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(kept, before) {
				t.Fatal("Splice wrote the kept reply")
			}
			got := tc.newReply()
			if err := proto.Unmarshal(out, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("spliced reply = %v, want %v", got, tc.want)
			}
		})
	}
	// The largest provenance fits Reserve, with the longer length prefixes
	// of its summary and ScoredSkill.
	id := string(bytes.Repeat([]byte("x"), 128))
	largest := &skillsvcv1.Provenance{Version: "sha256:" + string(bytes.Repeat([]byte("0"), 64)), Publisher: id, Approver: id,
		ScanVerdict: "unscanned", Signature: "verified", SignatureKey: strings.Repeat("k", signing.MaxKeyName), OutOfBand: true}
	if n := protowire.SizeTag(22) + protowire.SizeBytes(proto.Size(largest)) + 2*2; n > Reserve {
		t.Errorf("the largest provenance adds %d bytes, over Reserve (%d)", n, Reserve)
	}
	if _, err := Origins([]byte{0x0a, 0x05, 0x01}, ListSkills); err == nil {
		t.Error("Origins of a truncated reply: no error")
	}
}
