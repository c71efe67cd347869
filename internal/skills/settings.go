package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/textfile"
)

// settings is a user's stored preferences. It lives outside every mount so
// a worker cannot edit it as a file and `aws s3 sync --delete` of a library
// does not wipe it.
type settings struct {
	Disabled []string `json:"disabled"` // skill names
}

func (s settings) disabledSet() map[string]bool {
	m := make(map[string]bool, len(s.Disabled))
	for _, n := range s.Disabled {
		m[n] = true
	}
	return m
}

// Settings writes are rare; these bound their retries under contention.
const (
	settingsAttempts = 21
	settingsBackoff  = 5 * time.Millisecond
	maxSettingsBytes = 1 << 20
)

// settingsStore reads and updates each user's settings object.
type settingsStore struct {
	bucket      objstore.Bucket
	keyTemplate string // with {user}
}

func (st *settingsStore) key(id mounts.Identity) string {
	return strings.Replace(st.keyTemplate, "{user}", id.User, 1)
}

// load reads the user's settings and their ETag ("" when none exist).
func (st *settingsStore) load(ctx context.Context, id mounts.Identity) (settings, string, error) {
	var s settings
	data, a, err := textfile.Reader{MaxBytes: maxSettingsBytes}.Read(ctx, st.bucket, st.key(id), "skill settings")
	if objstore.IsNotFound(err) {
		return s, "", nil
	}
	if err != nil {
		return s, "", err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, "", fmt.Errorf("skill settings of %q are corrupt: %w", id.User, err)
	}
	return s, a.ETag, nil
}

// update applies change to the user's settings with a conditional write,
// retried when another writer got in between, so concurrent changes are all
// kept. change reports whether it changed anything.
func (st *settingsStore) update(ctx context.Context, id mounts.Identity, change func(*settings) bool) error {
	err := objstore.RetryConditional(ctx, settingsAttempts, settingsBackoff, func() error {
		s, etag, err := st.load(ctx, id)
		if err != nil || !change(&s) {
			return err
		}
		data, _ := json.Marshal(s)
		_, err = st.bucket.Put(ctx, st.key(id), bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if objstore.LostRace(err) {
		return fmt.Errorf("%w: skill settings changed during %d attempts", errkind.Aborted, settingsAttempts)
	}
	return err
}
