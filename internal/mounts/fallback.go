package mounts

import "path"

// Fallback is the path a read of the missing file p tries once more:
// p+".md" when p's last segment has no extension, so a skill's reference
// "reference" names reference.md; ok is false when p has an extension.
// The VFS, the catalog and reads pinned to a version all ask it.
func Fallback(p string) (alt string, ok bool) {
	if path.Ext(p) != "" {
		return "", false
	}
	return p + ".md", true
}
