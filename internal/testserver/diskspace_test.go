//go:build unix

package testserver

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestUsedFraction(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		blocks, bfree, bavail uint64
		want                  float64
		wantErr               bool
	}{
		{name: "empty", blocks: 100, bfree: 100, bavail: 100, want: 0},
		{name: "half", blocks: 100, bfree: 50, bavail: 50, want: 0.5},
		// 5 blocks reserved for root: 95 usable, 1 of them free.
		{name: "reserved blocks count as neither", blocks: 100, bfree: 6, bavail: 1, want: 94.0 / 95},
		{name: "full", blocks: 100, bfree: 5, bavail: 0, want: 1},
		{name: "no blocks", blocks: 0, bfree: 0, bavail: 0, wantErr: true},
		{name: "available above free", blocks: 100, bfree: 1, bavail: 2, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := usedFraction(tc.blocks, tc.bfree, tc.bavail)
			if (err != nil) != tc.wantErr {
				t.Fatalf("usedFraction = %v, %v; want error %v", got, err, tc.wantErr)
			}
			if !tc.wantErr && math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("usedFraction = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheckDiskSpace(t *testing.T) {
	// The test's own drive has room (MinIO runs on it in this very run); a
	// path that does not exist is an error, not a pass.
	if err := checkDiskSpace(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := checkDiskSpace(t.TempDir() + "/missing"); err == nil || !strings.Contains(err.Error(), "checking free space") {
		t.Fatalf("checkDiskSpace(missing dir) = %v, want a statfs error", err)
	}
}

func TestTempDirRemovedByShutdown(t *testing.T) {
	dir, err := TempDir("skillsvc-tempdir-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/bin", []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	tempDirs.removeAll() // what Shutdown does, without stopping the shared servers
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after Shutdown's removal %s: %v, want it gone", dir, err)
	}
}
