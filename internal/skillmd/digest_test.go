package skillmd_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/skillmd"
)

func TestManifestDigest(t *testing.T) {
	a := skillmd.FileDigest{Rel: "SKILL.md", Size: 10, SHA256: "aa"}
	b := skillmd.FileDigest{Rel: "scripts/run.py", Size: 3, SHA256: "bb"}
	d := skillmd.ManifestDigest([]skillmd.FileDigest{a, b})
	if len(d) != len("sha256:")+64 || d[:7] != "sha256:" {
		t.Fatalf("digest %q", d)
	}
	if got := skillmd.ManifestDigest([]skillmd.FileDigest{b, a}); got != d {
		t.Fatal("the digest depends on the files' order")
	}
	// Version ids are digests stored in libraries: the value is pinned.
	if want := "sha256:15c42dc803a221902965c4078b13107c8804bdcc8d414ba2d7f58f66c8885d06"; d != want {
		t.Fatalf("digest %s, want %s", d, want)
	}
	for name, files := range map[string][]skillmd.FileDigest{
		"renamed": {{Rel: "SKILL.md", Size: 10, SHA256: "aa"}, {Rel: "scripts/go.py", Size: 3, SHA256: "bb"}},
		"resized": {a, {Rel: "scripts/run.py", Size: 4, SHA256: "bb"}},
		"changed": {a, {Rel: "scripts/run.py", Size: 3, SHA256: "cc"}},
		"dropped": {a},
		// Fields are separated, so moving bytes between them changes it.
		"shifted": {a, {Rel: "scripts/run.py3", Size: 0, SHA256: "bb"}},
		// A mode alone: an executable file's line is marked.
		"executable": {a, {Rel: "scripts/run.py", Size: 3, SHA256: "bb", Mode: 0o755}},
	} {
		if skillmd.ManifestDigest(files) == d {
			t.Errorf("%s: same digest", name)
		}
	}
	// A regular file's mode changes nothing: folders without executable
	// files keep the ids they had before modes were recorded.
	if got := skillmd.ManifestDigest([]skillmd.FileDigest{{Rel: "SKILL.md", Size: 10, SHA256: "aa", Mode: 0o644}, {Rel: "scripts/run.py", Size: 3, SHA256: "bb", Mode: 0o644}}); got != d {
		t.Errorf("regular modes: digest %s, want %s", got, d)
	}
}
