// Package filemode is the one rule for the permission bits of skill files:
// a mode recorded at publish or upload (or in a plain S3 upload's object
// metadata, in the forms s3fs and rclone write) is served as 0o755 when
// any executable bit is set and 0o644 otherwise; a file with no recorded
// mode is 0o644 unless it starts with "#!".
package filemode

import (
	"bytes"
	"io/fs"
	"strconv"
	"strings"
)

// The only two modes a skill file is served with.
const (
	Regular    fs.FileMode = 0o644
	Executable fs.FileMode = 0o755
)

// MetadataKey is the S3 object metadata key (x-amz-meta-mode) holding a
// file's mode, as s3fs and rclone name it.
const MetadataKey = "mode"

// regular is S_IFREG, the file-type bits of a regular file's st_mode.
const regular = 0o100000

// Normal is m as served: Executable when any executable bit is set, else
// Regular. 0 (not recorded) stays 0.
func Normal(m fs.FileMode) fs.FileMode {
	switch {
	case m == 0:
		return 0
	case m&0o111 != 0:
		return Executable
	}
	return Regular
}

// Of is the mode a file is served with: its recorded mode normalized, or
// for a file with none, Executable when its content (head: at least its
// first two bytes) starts with "#!".
func Of(recorded fs.FileMode, head []byte) fs.FileMode {
	if recorded != 0 {
		return Normal(recorded)
	}
	if bytes.HasPrefix(head, []byte("#!")) {
		return Executable
	}
	return Regular
}

// Format is the metadata value recording m: the decimal st_mode of a
// regular file, as s3fs writes it (33261 for 0o755, 33188 for 0o644).
func Format(m fs.FileMode) string {
	return strconv.FormatUint(uint64(regular|m.Perm()), 10)
}

// Parse reads a metadata value: s3fs's decimal st_mode ("33261"), rclone's
// octal st_mode ("100755" or "0100755") or plain octal permission bits
// ("755", "0755"). It returns the permission bits, or 0 when the value is
// none of these (the mode is then not recorded).
func Parse(v string) fs.FileMode {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	// A regular file's decimal st_mode lies in 32768..36863 (0o100000 plus
	// the permission bits); the octal forms never do read as decimal
	// (they have at most 4 digits or at least 6), so this test tells them apart.
	if d, err := strconv.ParseUint(v, 10, 32); err == nil && d&^0o7777 == regular {
		return fs.FileMode(d).Perm()
	}
	o, err := strconv.ParseUint(v, 8, 32)
	if err != nil {
		return 0
	}
	if t := o &^ 0o7777; t != 0 && t != regular {
		return 0 // a directory or another file type: not a file's mode
	}
	return fs.FileMode(o).Perm()
}
