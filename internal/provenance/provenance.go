// Package provenance tells where a served skill comes from (version,
// publisher, approver, scan verdict, signature status) for the gRPC
// replies and MCP entries' _meta, from what the library package keeps
// (each library's provenance index: one cached read per library, none per
// skill) and, for a skill uploaded out of band, the verdict of its
// background scan (scanpolicy).
package provenance

import (
	"context"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/scanpolicy"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// MetaKey names the provenance in an MCP entry's _meta: our own prefix,
// as the skills extension lets intermediaries add provenance.
const MetaKey = "io.skillsvc/provenance"

// Lookup finds provenance through the publisher, and an out-of-band
// skill's scan verdict through the scanner.
type Lookup struct {
	Pub  *library.Publisher
	Scan *scanpolicy.Scanner // nil: no library scans
}

// LibraryOf is the library a skill of the caller's view is served from
// (skillview's layer).
func LibraryOf(id mounts.Caller, layer string) layout.LibraryRef {
	switch team, isTeam := strings.CutPrefix(layer, skillview.LayerTeam); {
	case layer == skillview.LayerShared:
		return layout.LibraryRef{Shared: true}
	case isTeam:
		return layout.LibraryRef{Team: team}
	}
	return layout.LibraryRef{User: id.User()}
}

// Proto converts a provenance.
func Proto(p library.Provenance) *skillsvcv1.Provenance {
	return &skillsvcv1.Provenance{Version: p.Version, Publisher: p.Publisher, Approver: p.Approver, ScanVerdict: p.ScanVerdict,
		Signature: p.Signature, SignatureKey: p.SignatureKey, OutOfBand: p.OutOfBand}
}

// Origin is what a served skill's provenance is looked up by: its folder's
// name, its layer and its manifest digest, as the catalog lists it.
type Origin struct{ Folder, Layer, Digest string }

// Get is the provenance of one served skill (GetSkill, skills/get).
func (l Lookup) Get(ctx context.Context, id mounts.Caller, folder, layer, digest string) (*skillsvcv1.Provenance, error) {
	ps, err := l.Page(ctx, id, []Origin{{Folder: folder, Layer: layer, Digest: digest}})
	if err != nil || ps == nil {
		return nil, err
	}
	return ps[0], nil
}

// Page is the provenance of each served skill of origins (aligned; nil
// without a publisher), the one answer of every surface: GetSkill,
// ListSkills, SearchSkills, skills/get and skills/list. A skill its
// library's provenance index names with its files is the live version's
// (one cached read of the index per library of the page, none per skill).
// Any other was uploaded out of band (or its index entry is missing: the
// publisher repairs it in the background, library.RepairProvenance):
// unsigned, with the verdict of the background scan of its files
// (scanpolicy.Scanner.Statuses: from process memory, else one shared-cache
// call for the page), "unscanned" before it and where the library's policy
// is off.
func (l Lookup) Page(ctx context.Context, id mounts.Caller, origins []Origin) ([]*skillsvcv1.Provenance, error) {
	if l.Pub == nil {
		return nil, nil
	}
	out := make([]*skillsvcv1.Provenance, len(origins))
	indexes := map[string]map[string]library.ListedProvenance{} // by layer
	var oob []int
	var contents []scanpolicy.Content
	for i, o := range origins {
		idx, ok := indexes[o.Layer]
		if !ok {
			var err error
			if idx, err = l.Pub.LibraryProvenance(ctx, LibraryOf(id, o.Layer)); err != nil {
				return nil, err
			}
			indexes[o.Layer] = idx
		}
		if e, ok := idx[o.Folder]; ok && e.Digest == o.Digest {
			out[i] = Proto(e.Provenance)
			continue
		}
		// No version put it live, its files were replaced in the bucket, or
		// the index lost its entry: looked up in the background (memory
		// only here), written when a version holds these files.
		l.Pub.RepairProvenance(LibraryOf(id, o.Layer), o.Folder, o.Digest)
		out[i] = Proto(library.Provenance{ScanVerdict: library.Unscanned, Signature: library.Unsigned, OutOfBand: true})
		oob = append(oob, i)
		contents = append(contents, scanpolicy.Content{Library: LibraryOf(id, o.Layer), Digest: o.Digest})
	}
	if len(oob) == 0 || l.Scan == nil {
		return out, nil
	}
	for k, st := range l.Scan.Statuses(ctx, contents) {
		if st != string(scanpolicy.Off) {
			out[oob[k]].ScanVerdict = st
		}
	}
	return out, nil
}

// metaJSON is the provenance as MCP _meta carries it.
type metaJSON struct {
	Version      string `json:"version,omitempty"`
	Publisher    string `json:"publisher,omitempty"`
	Approver     string `json:"approver,omitempty"`
	ScanVerdict  string `json:"scanVerdict"`
	Signature    string `json:"signature"`
	SignatureKey string `json:"signatureKey,omitempty"`
	OutOfBand    bool   `json:"outOfBand,omitempty"`
}

func meta(p *skillsvcv1.Provenance) map[string]any {
	return map[string]any{MetaKey: metaJSON{Version: p.GetVersion(), Publisher: p.GetPublisher(), Approver: p.GetApprover(),
		ScanVerdict: p.GetScanVerdict(), Signature: p.GetSignature(), SignatureKey: p.GetSignatureKey(), OutOfBand: p.GetOutOfBand()}}
}

// EntryMeta is a skills/get entry's _meta (mcpserver.WithEntryMeta); nil
// when the lookup fails, so the entry is served without it.
func (l Lookup) EntryMeta(ctx context.Context, id mounts.Caller, sk *skillview.Skill) (map[string]any, error) {
	p, err := l.Get(ctx, id, sk.Folder, sk.Layer, sk.ManifestDigest())
	if err != nil || p == nil {
		return nil, err
	}
	return meta(p), nil
}

// PageMeta is each skills/list entry's _meta, as Page tells it.
func (l Lookup) PageMeta(ctx context.Context, id mounts.Caller, skills []skillview.Skill) ([]map[string]any, error) {
	origins := make([]Origin, len(skills))
	for i := range skills {
		origins[i] = Origin{Folder: skills[i].Folder, Layer: skills[i].Layer, Digest: skills[i].ManifestDigest()}
	}
	ps, err := l.Page(ctx, id, origins)
	if err != nil || ps == nil {
		return nil, err
	}
	out := make([]map[string]any, len(ps))
	for i, p := range ps {
		out[i] = meta(p)
	}
	return out, nil
}
