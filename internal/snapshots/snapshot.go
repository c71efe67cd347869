package snapshots

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/skillsvc/skillsvc/internal/blobs"
	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/settings"
)

// Snapshot is a snapshot object: the frozen indexes of every layer of the
// caller's view. Its content names it, so the teams, being in it, are
// part of its identity.
type Snapshot struct {
	Version int      `json:"version"`
	User    string   `json:"user"`
	Teams   []string `json:"teams,omitempty"`
	// Layers: the user's, each team's in ID order, the shared one. A
	// version 1 snapshot has the user's and the shared one, unnamed.
	Layers []Layer `json:"layers"`
}

const snapshotVersion = 2

// The names of a view's layers, as internal/skills names them
// (skillview.LayerUser, LayerTeam+ID, LayerShared): a snapshot stores them.
const (
	layerUser   = "user"
	layerShared = "shared"
	layerTeam   = "team:"
)

// Layer is one library of a snapshot as its index listed it.
type Layer struct {
	Name   string `json:"name,omitempty"` // skillview.LayerUser, LayerTeam+ID or LayerShared
	Prefix string `json:"prefix"`         // the library's, as listed
	Space  string `json:"space"`          // its blob space
	Files  []File `json:"files"`          // by path
	// Protected are the names the library protected when pinned;
	// ProtectAll says its list was no list: every skill.
	Protected  []string `json:"protected,omitempty"`
	ProtectAll bool     `json:"protect_all,omitempty"`
	// Scopes are the scopes the library defined when pinned.
	Scopes []settings.ScopeDef `json:"scopes,omitempty"`
}

// File is one addressable object of a library as listed, and the blob
// holding its bytes.
type File struct {
	Rel      string    `json:"rel"`
	Size     int64     `json:"size"`
	ETag     string    `json:"etag"`
	ModTime  time.Time `json:"mod_time"`
	Blob     string    `json:"blob"`      // sha256 of the bytes
	BlobETag string    `json:"blob_etag"` // the blob object's
	// Mode is the file's mode as the index served it when frozen
	// (filemode.Regular or Executable; 0 in a snapshot frozen before modes
	// were recorded). It lives here, not on the blob, which every file of
	// the same bytes shares.
	Mode fs.FileMode `json:"mode,omitempty"`
	// Hashed: the index held the file's digest (a skill within the MCP
	// extension's limits), so its manifest lists it.
	Hashed  bool   `json:"hashed,omitempty"`
	Head    []byte `json:"head,omitempty"` // a SKILL.md's frontmatter head
	gone    bool   // deleted since listed: left out
	rewrote bool   // its blob was old and written again (blobs.Store.Fresh)
}

// valid reports whether doc is a snapshot of user's library this version
// reads, its layers in a view's order: every file names a blob. A version
// 1 snapshot gets its layers' names.
func (doc *Snapshot) valid(user string) bool {
	if doc.User != user {
		return false
	}
	switch doc.Version {
	case 1:
		if len(doc.Layers) != 2 || len(doc.Teams) != 0 {
			return false
		}
		doc.Layers[0].Name, doc.Layers[1].Name = layerUser, layerShared
	case snapshotVersion:
		if len(doc.Layers) != len(doc.Teams)+2 || len(doc.Teams) > mounts.MaxTeams {
			return false
		}
		for i, fl := range doc.Layers[1 : len(doc.Layers)-1] {
			if fl.Name != layerTeam+doc.Teams[i] {
				return false
			}
		}
		if doc.Layers[0].Name != layerUser || doc.Layers[len(doc.Layers)-1].Name != layerShared {
			return false
		}
	default:
		return false
	}
	for _, fl := range doc.Layers {
		for _, f := range fl.Files {
			if !blobs.Digest(f.Blob).Valid() {
				return false
			}
		}
	}
	return true
}

// ErrGone: the snapshot a pin names is not in the bucket.
var ErrGone = errkind.New(errkind.FailedPrecondition, "the thread's pinned library snapshot is gone")

// Read reads the snapshot sum of user, checking that its content is what
// names it: ErrGone when it is not there (swept since a pin was read).
func (s *Store) Read(ctx context.Context, user, sum string) (*Snapshot, error) {
	key := s.Key(user, sum)
	data, _, err := s.readBounded(ctx, key, s.cfg.MaxSnapshotBytes)
	if objstore.IsNotFound(err) {
		return nil, ErrGone
	}
	if err != nil {
		return nil, err
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("%w: %s", blobs.ErrCorrupt, key)
	}
	var doc Snapshot
	if err := json.Unmarshal(data, &doc); err != nil || !doc.valid(user) {
		return nil, fmt.Errorf("%w: %s", blobs.ErrCorrupt, key)
	}
	return &doc, nil
}

func (s *Store) readBounded(ctx context.Context, key string, max int64) ([]byte, objstore.Attributes, error) {
	rc, a, err := s.bucket.Get(ctx, key)
	if err != nil {
		return nil, a, err
	}
	defer rc.Close()
	if a.Size > max {
		return nil, a, fmt.Errorf("%w: %s is %d bytes, over the %d-byte bound", errkind.ResourceExhausted, key, a.Size, max)
	}
	data, err := io.ReadAll(io.LimitReader(objstore.ContextReader(ctx, rc), max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("%w: %s is over the %d-byte bound", errkind.ResourceExhausted, key, max)
	}
	return data, a, err
}
