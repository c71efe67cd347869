package vfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/skillsvc/skillsvc/internal/mounts"
	"github.com/skillsvc/skillsvc/internal/objstore"
)

// EditResult reports a successful Edit.
type EditResult struct {
	Occurrences int64
	Info        Info
}

// Edit replaces oldString by newString in a text file. oldString must occur
// exactly once unless replaceAll is set. The write is conditional on the ETag
// that was read; when another writer got in between, Edit reads again and
// reapplies, so no concurrent update is lost.
func (fs *FS) Edit(ctx context.Context, id mounts.Identity, vpath, oldString, newString string, replaceAll bool) (EditResult, error) {
	if oldString == "" {
		return EditResult{}, fmt.Errorf("%w: old_string must not be empty", ErrInvalidArgument)
	}
	if oldString == newString {
		return EditResult{}, fmt.Errorf("%w: old_string and new_string are identical", ErrInvalidArgument)
	}
	r, err := fs.resolveWritable(id, vpath)
	if err != nil {
		return EditResult{}, err
	}
	for attempt := 0; ; attempt++ {
		data, a, err := fs.readText(ctx, vpath, r.Key)
		if err != nil {
			return EditResult{}, storeErr(vpath, err)
		}
		content := string(data)
		n := strings.Count(content, oldString)
		switch {
		case n == 0:
			return EditResult{}, fmt.Errorf("%w: old_string not found in %q", ErrEditMismatch, vpath)
		case n > 1 && !replaceAll:
			return EditResult{}, fmt.Errorf("%w: old_string occurs %d times in %q; add context to make it unique or set replace_all", ErrEditMismatch, n, vpath)
		}
		if replaceAll {
			content = strings.ReplaceAll(content, oldString, newString)
		} else {
			content = strings.Replace(content, oldString, newString, 1)
		}
		if int64(len(content)) > fs.cfg.MaxWriteBytes {
			return EditResult{}, fmt.Errorf("%w: the edited file would be %d bytes, at most %d are stored", ErrTooLarge, len(content), fs.cfg.MaxWriteBytes)
		}
		na, err := fs.bucket.Put(ctx, r.Key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{IfMatch: a.ETag})
		if err == nil {
			return EditResult{Occurrences: int64(n), Info: fileInfo(vpath, na)}, nil
		}
		if !errors.Is(err, objstore.ErrPrecondition) && !errors.Is(err, objstore.ErrConflict) {
			return EditResult{}, storeErr(vpath, err)
		}
		if attempt+1 >= fs.cfg.EditAttempts {
			return EditResult{}, fmt.Errorf("%w: %q changed during %d edit attempts", ErrConflict, vpath, attempt+1)
		}
		if err := backoff(ctx, fs.cfg.EditBackoff, attempt); err != nil {
			return EditResult{}, err
		}
	}
}

// backoff waits a random time up to base·2^attempt (capped at 64·base), so
// writers that collided spread out instead of colliding again.
func backoff(ctx context.Context, base time.Duration, attempt int) error {
	d := base << min(attempt, 6)
	t := time.NewTimer(time.Duration(rand.Int64N(int64(d) + 1)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
