package main

import "testing"

// TestKeyKind: a request's key reads as its kind, whoever's and whichever
// skill's it is; a bucket request (a listing) as its operation.
func TestKeyKind(t *testing.T) {
	for _, tc := range []struct{ name, op, key, want string }{
		{"listing", "ListObjectsV2", "", "ListObjectsV2"},
		{"provenance index", "GetObject", "tenant-00042/versions/provenance.json", "GetObject {user}/versions/provenance.json"},
		{"version record", "GetObject", "tenant-01999/versions/skills/own-3/v/" + "0123456789abcdef0123456789abcdef.json", "GetObject {user}/versions/skills/{skill}/v/{digest}.json"},
		{"shared skill", "GetObject", "_shared/cat-07/skill-0007/SKILL.md", "GetObject _shared/cat-07/{skill}/SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keyKind(tc.op, tc.key); got != tc.want {
				t.Errorf("keyKind(%q, %q) = %q, want %q", tc.op, tc.key, got, tc.want)
			}
		})
	}
}
