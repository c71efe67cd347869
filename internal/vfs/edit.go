package vfs

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillsvc/skillsvc/internal/errkind"
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
func (fs *FS) Edit(ctx context.Context, id mounts.Caller, vpath, oldString, newString string, replaceAll bool) (EditResult, error) {
	if oldString == "" {
		return EditResult{}, fmt.Errorf("%w: old_string must not be empty", errkind.InvalidArgument)
	}
	if oldString == newString {
		return EditResult{}, fmt.Errorf("%w: old_string and new_string are identical", errkind.InvalidArgument)
	}
	if !utf8.ValidString(newString) {
		return EditResult{}, fmt.Errorf("%w: new_string is not UTF-8", errkind.InvalidArgument)
	}
	r, err := fs.resolveWritable(id, vpath)
	if err != nil {
		return EditResult{}, err
	}
	var res EditResult
	err = objstore.RetryConditional(ctx, fs.cfg.EditAttempts, fs.cfg.EditBackoff, func() error {
		data, a, err := fs.readText(ctx, vpath, nil, fs.bucket, r.Key)
		if err != nil {
			return storeErr(vpath, err)
		}
		content := string(data)
		n := strings.Count(content, oldString)
		switch {
		case n == 0:
			return fmt.Errorf("%w: old_string not found in %q", ErrEditMismatch, vpath)
		case n > 1 && !replaceAll:
			return fmt.Errorf("%w: old_string occurs %d times in %q; add context to make it unique or set replace_all", ErrEditMismatch, n, vpath)
		}
		// Size the result before making it: n copies of a large new_string
		// could ask for far more memory than any file may hold.
		if size := int64(len(content)) + int64(n)*(int64(len(newString))-int64(len(oldString))); size > fs.cfg.MaxWriteBytes {
			return fmt.Errorf("%w: the edited file would be %d bytes, at most %d are stored", errkind.ResourceExhausted, size, fs.cfg.MaxWriteBytes)
		}
		if replaceAll {
			content = strings.ReplaceAll(content, oldString, newString)
		} else {
			content = strings.Replace(content, oldString, newString, 1)
		}
		na, err := fs.bucket.Put(ctx, r.Key, strings.NewReader(content), int64(len(content)), objstore.PutOptions{IfMatch: a.ETag})
		if err != nil {
			if objstore.LostRace(err) {
				return err // read again and reapply
			}
			return storeErr(vpath, err)
		}
		res = EditResult{Occurrences: int64(n), Info: fileInfo(vpath, na)}
		return nil
	})
	if objstore.LostRace(err) {
		return EditResult{}, fmt.Errorf("%w: %q changed during %d edit attempts", errkind.Aborted, vpath, fs.cfg.EditAttempts)
	}
	return res, err
}
