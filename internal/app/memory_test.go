package app_test

import (
	"testing"

	"github.com/skillsvc/skillsvc/internal/app"
)

// TestMemoryLimit: twice the caches' budgets by default (448 MiB), the
// flag when given, none when it is negative or GOMEMLIMIT is set.
func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		want   int64
		wantOK bool
	}{
		{"default", nil, nil, 448 << 20, true},
		{"budgets", []string{"--skills.max-held-bytes=268435456", "--cache.lru.max-bytes=1048576"}, nil, 2 * (256<<20 + 32<<20 + 1<<20), true},
		{"flag", []string{"--memory-limit-bytes=1000000000"}, nil, 1000000000, true},
		{"off", []string{"--memory-limit-bytes=-1"}, nil, 0, false},
		{"GOMEMLIMIT wins", []string{"--memory-limit-bytes=1000000000"}, map[string]string{"GOMEMLIMIT": "900MiB"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			cfg, err := app.Load(tc.args, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := app.MemoryLimit(cfg, getenv); got != tc.want || ok != tc.wantOK {
				t.Errorf("MemoryLimit = %d, %t; want %d, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
