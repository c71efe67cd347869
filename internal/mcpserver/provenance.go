package mcpserver

import (
	"context"

	skillsvcv1 "github.com/skillsvc/skillsvc/gen/skillsvc/v1"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/skillview"
)

// provenanceKey names a skill's provenance in its entry's _meta, under our
// own prefix as the skills extension lets intermediaries add it.
const provenanceKey = "io.skillsvc/provenance"

// ProvenanceFunc looks up a served skill's provenance (server.Versions'):
// its folder's name, layer and manifest digest as the catalog lists it.
type ProvenanceFunc func(ctx context.Context, id mounts.Caller, folder, layer, digest string) (*skillsvcv1.Provenance, error)

// WithProvenance adds each skills/get entry's provenance to its _meta.
func WithProvenance(f ProvenanceFunc) Option {
	return func(h *Handler) { h.provenance = f }
}

// provenanceJSON is the provenance as _meta carries it.
type provenanceJSON struct {
	Version      string `json:"version,omitempty"`
	Publisher    string `json:"publisher,omitempty"`
	Approver     string `json:"approver,omitempty"`
	ScanVerdict  string `json:"scanVerdict"`
	Signature    string `json:"signature"`
	SignatureKey string `json:"signatureKey,omitempty"`
	OutOfBand    bool   `json:"outOfBand,omitempty"`
}

// withProvenance adds sk's provenance to e's _meta (one version record
// read); without a lookup, or when it fails, e is left as is: the entry
// is served either way.
func (s *identityServer) withProvenance(ctx context.Context, sk *skillview.Skill, e *skillEntry) *skillEntry {
	if s.h.provenance == nil {
		return e
	}
	id, err := callerOf(ctx)
	if err != nil {
		return e
	}
	p, err := s.h.provenance(ctx, id, sk.Folder, sk.Layer, sk.ManifestDigest())
	if err != nil || p == nil {
		if err != nil {
			s.h.log.Warn("mcp: provenance lookup failed", "skill", sk.Name, "err", err)
		}
		return e
	}
	e.Meta = map[string]any{provenanceKey: provenanceJSON{Version: p.GetVersion(), Publisher: p.GetPublisher(), Approver: p.GetApprover(),
		ScanVerdict: p.GetScanVerdict(), Signature: p.GetSignature(), SignatureKey: p.GetSignatureKey(), OutOfBand: p.GetOutOfBand()}}
	return e
}
