package main

import (
	"errors"
	"slices"
	"testing"
)

// TestTenantRatios: a random-user row is compared with the one-user row of
// its own call and pass, never with another pass's or a failed row.
func TestTenantRatios(t *testing.T) {
	rows := []tenantRow{
		{name: "one user, GetSkill", rate: 1000},
		{name: "random users, GetSkill", rate: 900},
		{name: "one user, FormatSkills", rate: 2000},
		{name: "random users, FormatSkills", err: errors.New("boom")},
		{name: "one user, GetSkill, events", rate: 800},
		{name: "random users, GetSkill, events", rate: 1000},
		{name: "random users, ListSkills, events", rate: 10},
	}
	got := tenantRatios(rows)
	if want := []string{"GetSkill 90%", "GetSkill, events 125%"}; !slices.Equal(got, want) {
		t.Errorf("tenantRatios = %q, want %q", got, want)
	}
}
