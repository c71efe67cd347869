package main

import (
	"strings"
	"testing"
)

// TestAdminBulkCleanupEndToEnd: skillctl reaches the admins' bulk
// clean-up (AdminService.DeleteSkillVersions and RejectProposals).
func TestAdminBulkCleanupEndToEnd(t *testing.T) {
	addr := startServer(t)
	env := map[string]string{"SKILLCTL_TARGET": addr}
	if r := mustRun(t, env, "admin", "reject-proposals", "--library", "shared", "--older-than", "720h", "--comment", "expired"); strings.TrimSpace(r.stdout) != "rejected 0, deleted 0" {
		t.Errorf("reject-proposals printed %q", r.stdout)
	}
	if r := mustRun(t, env, "admin", "delete-versions", "csv", "sha256:"+strings.Repeat("0", 64), "--library", "alice"); strings.TrimSpace(r.stdout) != "deleted 0" {
		t.Errorf("delete-versions printed %q", r.stdout)
	}
	if r := runCtl(t, env, "admin", "delete-versions", "csv", "sha256:0123", "--library", "alice"); r.code == 0 {
		t.Errorf("delete-versions of a short id succeeded: %q", r.stdout)
	}
}
