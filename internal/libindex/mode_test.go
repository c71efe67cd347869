package libindex

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/skillsvc/skillsvc/internal/objstore"
	"github.com/skillsvc/skillsvc/internal/objstore/objstoretest"
)

// TestDigestModes: a digest holds the mode the read of the file returned
// (the shebang rule only where none is recorded), and a file written again
// with the same bytes and another mode (the same ETag) is read again, not
// served from the digest or file cache under its old mode.
func TestDigestModes(t *testing.T) {
	b := objstoretest.NewBucket(t, nil)
	put := func(key, body string, mode fs.FileMode) {
		t.Helper()
		if _, err := b.Put(t.Context(), key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{Mode: mode}); err != nil {
			t.Fatal(err)
		}
	}
	put("alice/skills/a/SKILL.md", skillA, 0o644)
	put("alice/skills/a/scripts/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	put("alice/skills/a/scripts/lib.py", "import os\n", 0o644)
	put("alice/skills/a/bin/tool", "ELF", 0o755)
	put("alice/skills/a/notes.sh", "#!/bin/sh\n", 0o644)     // recorded: the shebang does not count
	put("alice/skills/a/scripts/plain.sh", "#!/bin/sh\n", 0) // not recorded: the shebang counts
	put("alice/skills/a/scripts/plain.py", "x = 1\n", 0)
	want := map[string]fs.FileMode{
		"alice/skills/a/SKILL.md":         0o644,
		"alice/skills/a/scripts/run.sh":   0o755,
		"alice/skills/a/scripts/lib.py":   0o644,
		"alice/skills/a/bin/tool":         0o755,
		"alice/skills/a/notes.sh":         0o644,
		"alice/skills/a/scripts/plain.sh": 0o755,
		"alice/skills/a/scripts/plain.py": 0o644,
	}
	ix, _ := newStore(t, b, nil, 0)
	check := func() {
		t.Helper()
		x, err := ix.Get(t.Context(), aliceLayer)
		if err != nil {
			t.Fatal(err)
		}
		for key, mode := range want {
			if dg, ok := x.DigestOf(key); !ok || dg.Mode != mode {
				t.Errorf("digest of %s: mode %#o (held %t), want %#o", key, dg.Mode, ok, mode)
			}
		}
	}
	check()
	// The same bytes, the other mode: a new version of the file.
	put("alice/skills/a/scripts/run.sh", "#!/bin/sh\necho hi\n", 0o644)
	put("alice/skills/a/scripts/lib.py", "import os\n", 0o755)
	want["alice/skills/a/scripts/run.sh"], want["alice/skills/a/scripts/lib.py"] = 0o644, 0o755
	if err := ix.Drop(t.Context(), aliceLayer); err != nil {
		t.Fatal(err)
	}
	check()
}
