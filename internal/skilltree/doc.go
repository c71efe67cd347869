// Package skilltree serves each caller's merged skills library (their view,
// internal/views) as the VFS tree mounted at the skills mount, so every path
// a listing returns can be read, listed and walked with FilesystemService,
// within the one text limit GetSkill and ReadSkillFile read with too.
package skilltree
