package server

// SetArtifactBudget lowers ListSkills' packing budget for a test, until
// the test's cleanup restores it.
func SetArtifactBudget(cleanup func(func()), n int64) {
	old := artifactBudget
	artifactBudget = n
	cleanup(func() { artifactBudget = old })
}
