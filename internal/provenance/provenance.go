// Package provenance tells where a served skill comes from (version,
// publisher, approver, scan verdict, signature status) for the gRPC
// replies and MCP entries' _meta, from what the library package keeps: the
// version record of the live copy's manifest digest (GetSkill, skills/get:
// one read), and each library's provenance index (listings: one cached
// read per library, none per skill).
package provenance

import (
	"context"
	"strings"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/layout"
	"github.com/skillsvc/skillsvc/internal/library"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// MetaKey names the provenance in an MCP entry's _meta: our own prefix,
// as the skills extension lets intermediaries add provenance.
const MetaKey = "io.skillsvc/provenance"

// Lookup finds provenance through the publisher.
type Lookup struct{ Pub *library.Publisher }

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

// Get is the provenance of a served skill: its folder's name, layer and
// manifest digest as the catalog lists it.
func (l Lookup) Get(ctx context.Context, id mounts.Caller, folder, layer, digest string) (*skillsvcv1.Provenance, error) {
	// From the library's provenance index, as a listing: one cached read
	// per library, so a warm GetSkill makes no storage request.
	listed, err := l.Listed(ctx, id, layer)
	if err != nil || listed == nil {
		return nil, err
	}
	return listed(folder, digest), nil
}

// outOfBand is the provenance of a skill no version of its library put
// live: uploaded out of band (or live since before the index; its next
// publish or signature adds it). skills/get and skills/list tell the same.
func outOfBand() *skillsvcv1.Provenance {
	return Proto(library.Provenance{ScanVerdict: library.Unscanned, Signature: library.Unsigned, OutOfBand: true})
}

// Listed is, for a listing, the provenance of one layer's skills by folder
// name and manifest digest: one read of the library's provenance index
// (cached). A skill the index does not name, or names with other files,
// is out of band (outOfBand), as skills/get tells it too.
func (l Lookup) Listed(ctx context.Context, id mounts.Caller, layer string) (func(folder, digest string) *skillsvcv1.Provenance, error) {
	if l.Pub == nil {
		return nil, nil
	}
	idx, err := l.Pub.LibraryProvenance(ctx, LibraryOf(id, layer))
	if err != nil {
		return nil, err
	}
	return func(folder, digest string) *skillsvcv1.Provenance {
		e, ok := idx[folder]
		switch {
		case !ok, e.Digest != digest: // no version put it live, or its files were replaced in the bucket
			return outOfBand()
		}
		return Proto(e.Provenance)
	}, nil
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

// PageMeta is each skills/list entry's _meta: one index read per layer of
// the page.
func (l Lookup) PageMeta(ctx context.Context, id mounts.Caller, skills []skillview.Skill) ([]map[string]any, error) {
	out := make([]map[string]any, len(skills))
	byLayer := map[string]func(folder, digest string) *skillsvcv1.Provenance{}
	for i := range skills {
		sk := &skills[i]
		look, ok := byLayer[sk.Layer]
		if !ok {
			var err error
			if look, err = l.Listed(ctx, id, sk.Layer); err != nil {
				return nil, err
			}
			byLayer[sk.Layer] = look
		}
		if look == nil {
			continue
		}
		if p := look(sk.Folder, sk.ManifestDigest()); p != nil {
			out[i] = meta(p)
		}
	}
	return out, nil
}
