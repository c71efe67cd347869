//go:build unix

package testserver

import (
	"fmt"
	"syscall"
)

// minioFullFraction is how full a drive may be before MinIO refuses every
// write (its diskFillFraction, 0.99) less a margin for what the tests write.
const minioFullFraction = 0.98

// checkDiskSpace fails when the drive holding dir is too full for MinIO to
// accept writes. MinIO starts and answers reads on such a drive but fails
// each PutObject with XMinioStorageFull, which shows up as dozens of
// unrelated test failures; one error naming the cause is clearer.
func checkDiskSpace(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("checking free space under %s: %w", dir, err)
	}
	used, err := usedFraction(uint64(st.Blocks), uint64(st.Bfree), uint64(st.Bavail))
	if err != nil {
		return fmt.Errorf("checking free space under %s: %w", dir, err)
	}
	if used >= minioFullFraction {
		free := uint64(st.Bavail) * uint64(st.Bsize)
		return fmt.Errorf("the drive holding %s is %.1f%% full (%.1f GiB free): MinIO refuses writes above 99%%; free some space (leftover test directories in %s, go clean -cache)",
			dir, 100*used, float64(free)/(1<<30), dir)
	}
	return nil
}

// usedFraction is the share of the drive in use the way MinIO counts it:
// blocks reserved for root count as neither total nor free.
func usedFraction(blocks, bfree, bavail uint64) (float64, error) {
	if bfree < bavail || blocks < bfree-bavail {
		return 0, fmt.Errorf("inconsistent block counts (blocks %d, free %d, available %d)", blocks, bfree, bavail)
	}
	total := blocks - (bfree - bavail)
	if total == 0 {
		return 0, fmt.Errorf("drive reports no blocks")
	}
	return float64(total-bavail) / float64(total), nil
}
