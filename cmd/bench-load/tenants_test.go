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

// TestTenantRatiosRounds: with several rounds each random-user row is
// compared with the one-user row of its own round, and the median of the
// rounds is printed with each round's ratio, in the order measured.
func TestTenantRatiosRounds(t *testing.T) {
	rows := []tenantRow{
		{name: "one user, GetSkill", round: 1, rate: 1000},
		{name: "random users, GetSkill", round: 1, rate: 600},
		{name: "one user, GetSkill", round: 2, rate: 500},
		{name: "random users, GetSkill", round: 2, rate: 450},
		{name: "one user, GetSkill", round: 3, rate: 1000},
		{name: "random users, GetSkill", round: 3, rate: 1200},
		{name: "one user, FormatSkills", round: 1, rate: 100},
		{name: "random users, FormatSkills", round: 1, rate: 80},
		{name: "one user, FormatSkills", round: 2, rate: 100},
		{name: "random users, FormatSkills", round: 2, rate: 100},
	}
	got := tenantRatios(rows)
	want := []string{"GetSkill 90% (median of 60%, 90%, 120%)", "FormatSkills 90% (median of 80%, 100%)"}
	if !slices.Equal(got, want) {
		t.Errorf("tenantRatios = %q, want %q", got, want)
	}
	if l := rows[1].label(); l != "random users, GetSkill (round 1)" {
		t.Errorf("label = %q", l)
	}
}
