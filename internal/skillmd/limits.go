package skillmd

// The MCP skills extension's per-skill limits (SEP-2640), which a served
// skill SHOULD NOT exceed: the extension leaves a skill over either out of
// skills/list, and the catalog neither hashes its files nor lists them in
// its manifest (a library of such skills would make each index build read
// gigabytes).
const (
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
)

// OverLimits reports whether a skill of files files and bytes bytes in
// total is over MaxSkillFiles or MaxSkillBytes.
func OverLimits(files int, bytes int64) bool {
	return files > MaxSkillFiles || bytes > MaxSkillBytes
}
