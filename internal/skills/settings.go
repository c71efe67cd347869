package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/errkind"
	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
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

func (l *Library) settingsKey(id mounts.Identity) string {
	return strings.Replace(l.cfg.SettingsKey, "{user}", id.User, 1)
}

// settings reads the user's settings and their ETag ("" when none exist).
func (l *Library) settings(ctx context.Context, id mounts.Identity) (settings, string, error) {
	var s settings
	rc, a, err := l.bucket.Get(ctx, l.settingsKey(id))
	if objstore.IsNotFound(err) {
		return s, "", nil
	}
	if err != nil {
		return s, "", err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return s, "", err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, "", fmt.Errorf("skill settings of %q are corrupt: %w", id.User, err)
	}
	return s, a.ETag, nil
}

// SetEnabled enables or disables a skill for the user, by name, without
// touching the skill. The write is conditional and retried, so concurrent
// changes to the settings are all kept. It returns the skill's summary.
func (l *Library) SetEnabled(ctx context.Context, id mounts.Identity, ref string, enabled bool) (Skill, error) {
	v, err := l.view(ctx, id)
	if err != nil {
		return Skill{}, err
	}
	ref = strings.TrimSpace(ref)
	name := ""
	if sk, err := l.find(v, ref); err == nil {
		name = sk.name
	} else if !enabled || !errors.Is(err, errkind.NotFound) || !nameRE.MatchString(ref) {
		return Skill{}, err
	} else {
		name = ref // re-enabling a skill that is gone is allowed
	}
	key := l.settingsKey(id)
	err = objstore.RetryConditional(ctx, settingsAttempts, settingsBackoff, func() error {
		s, etag, err := l.settings(ctx, id)
		if err != nil {
			return err
		}
		i := slices.Index(s.Disabled, name)
		switch {
		case enabled && i < 0, !enabled && i >= 0:
			return nil // already so
		case enabled:
			s.Disabled = slices.Delete(s.Disabled, i, i+1)
		default:
			s.Disabled = append(s.Disabled, name)
			slices.Sort(s.Disabled)
		}
		data, _ := json.Marshal(s)
		_, err = l.bucket.Put(ctx, key, bytes.NewReader(data), int64(len(data)), objstore.PutOptions{IfMatch: etag, IfNoneMatch: etag == ""})
		return err
	})
	if err != nil {
		return Skill{}, err
	}
	return l.skillByName(ctx, id, v, name, !enabled)
}

// Settings writes are rare; these bound their retries under contention.
const (
	settingsAttempts = 21
	settingsBackoff  = 5 * time.Millisecond
)

func (l *Library) skillByName(ctx context.Context, id mounts.Identity, v *view, name string, disabled bool) (Skill, error) {
	s, ok := v.byName[name]
	if !ok {
		return Skill{Folder: name, Frontmatter: Frontmatter{Name: name}, Disabled: disabled}, nil
	}
	p, err := l.parse(ctx, s)
	if err != nil {
		return Skill{}, err
	}
	sk := l.summary(s, p, map[string]bool{name: disabled})
	return sk, nil
}
