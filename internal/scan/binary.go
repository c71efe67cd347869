package scan

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/skillsvc/skillsvc/internal/textfile"
)

// textExtensions name files a reader (and the catalog) takes for text.
var textExtensions = map[string]bool{
	"md": true, "markdown": true, "mdx": true, "txt": true, "rst": true, "adoc": true,
	"py": true, "sh": true, "bash": true, "zsh": true, "ksh": true, "fish": true, "ps1": true, "psm1": true, "bat": true, "cmd": true,
	"js": true, "mjs": true, "cjs": true, "ts": true, "mts": true, "cts": true, "jsx": true, "tsx": true,
	"rb": true, "pl": true, "pm": true, "php": true, "lua": true, "r": true, "go": true, "java": true, "kt": true, "swift": true, "cs": true,
	"json": true, "jsonl": true, "yaml": true, "yml": true, "toml": true, "ini": true, "cfg": true, "conf": true, "env": true,
	"csv": true, "tsv": true, "xml": true, "html": true, "htm": true, "css": true, "svg": true, "sql": true,
}

// isBinaryFile reports the binary rules' findings for f and whether f is
// binary (then the text rules skip it). textfile.IsBinary is the one
// binary check: the catalog refuses to serve as text what it calls binary.
func isBinaryFile(f File, c *collector) bool {
	if kind := executableKind(f.Data); kind != "" {
		c.add(Finding{Rule: RuleExec, Severity: severityOf(RuleExec), File: f.Path,
			Message: fmt.Sprintf("a native executable (%s): a skill's scripts are source, reviewed as text", kind)})
	}
	if !textfile.IsBinary(f.Data, int64(len(f.Data))) {
		return false
	}
	if textExtensions[ext(f.Path)] {
		c.add(Finding{Rule: RuleFakeText, Severity: severityOf(RuleFakeText), File: f.Path,
			Message: fmt.Sprintf("named as text (.%s) but its bytes are binary", ext(f.Path))})
	}
	return true
}

// executableKind names the native executable format data starts with, or
// "". PE needs its "PE\0\0" header where the MZ stub points, and a fat
// Mach-O few architectures: "MZ" and 0xCAFEBABE alone also open text and
// Java class files.
func executableKind(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x7fELF")):
		return "ELF"
	case len(data) >= 4 && isMachO(binary.BigEndian.Uint32(data)):
		return "Mach-O"
	case len(data) >= 8 && binary.BigEndian.Uint32(data) == 0xcafebabe && binary.BigEndian.Uint32(data[4:]) < 32:
		return "Mach-O universal"
	case len(data) >= 0x40 && bytes.HasPrefix(data, []byte("MZ")):
		off := int64(binary.LittleEndian.Uint32(data[0x3c:]))
		if off+4 <= int64(len(data)) && bytes.Equal(data[off:off+4], []byte("PE\x00\x00")) {
			return "PE (Windows)"
		}
	}
	return ""
}

func isMachO(m uint32) bool {
	switch m {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe:
		return true
	}
	return false
}
