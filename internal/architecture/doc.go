// Package architecture holds no code: its tests check the structural rules
// the rest of the tree keeps (ARCHITECTURE.md), so a change that breaks one
// fails make test instead of waiting for the next restructure: no package
// under internal/ past MaxPackageLines of hand-written code, and one gRPC
// server in the process.
package architecture

// MaxPackageLines is the most non-test, hand-written lines one package under
// internal/ may hold: past it a package is doing more than one job (issue
// 40 split internal/skills at 7,906 and internal/library at 2,900).
const MaxPackageLines = 2500
