package filemode

import (
	"io/fs"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want fs.FileMode
	}{
		{"33261", 0o755},  // s3fs, 0100755 in decimal
		{"33188", 0o644},  // s3fs, 0100644 in decimal
		{"100755", 0o755}, // rclone
		{"0100644", 0o644},
		{"755", 0o755},
		{"0755", 0o755},
		{"644", 0o644},
		{" 33261 ", 0o755},
		{"", 0},
		{"rwxr-xr-x", 0},
		{"40755", 0}, // a directory's st_mode in octal
		{"16877", 0}, // a directory's st_mode in decimal (040755) reads as octal garbage
		{"999", 0},
	} {
		if got := Parse(tc.in); got != tc.want {
			t.Errorf("Parse(%q) = %#o, want %#o", tc.in, got, tc.want)
		}
	}
}

func TestFormatParses(t *testing.T) {
	for _, m := range []fs.FileMode{Regular, Executable} {
		if got := Parse(Format(m)); got != m {
			t.Errorf("Parse(Format(%#o)) = %#o", m, got)
		}
	}
	if Format(Executable) != "33261" || Format(Regular) != "33188" {
		t.Errorf("Format: %s %s, want s3fs's 33261 33188", Format(Executable), Format(Regular))
	}
}

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded fs.FileMode
		head     string
		want     fs.FileMode
	}{
		{"recorded executable", 0o755, "print(1)", Executable},
		{"recorded regular beats a shebang", 0o644, "#!/bin/sh", Regular},
		{"group exec bit", 0o654, "", Executable},
		{"unrecorded shebang", 0, "#!/bin/sh\n", Executable},
		{"unrecorded plain", 0, "import os", Regular},
		{"unrecorded empty", 0, "", Regular},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.recorded, []byte(tc.head)); got != tc.want {
				t.Errorf("Of = %#o, want %#o", got, tc.want)
			}
		})
	}
}
