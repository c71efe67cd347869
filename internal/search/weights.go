package search

// DefaultWeights are the BM25F parameters the service ranks with, chosen by
// TestTuneWeights (coordinate search from neutral weights, SEARCH_TUNE=1
// SEARCH_TUNE_FROM=neutral) on the "tune" requests of test/selection
// against its 10,000-skill corpus plus the 17 targets, 2026-11-29:
//
//	tune    (107): Hit@1 0.402  Recall@3 0.607  Recall@10 0.776  MRR 0.524
//	holdout  (63): Hit@1 0.317  Recall@3 0.540  Recall@10 0.762  MRR 0.459
//
// (neutral weights: holdout Hit@1 0.302, Recall@10 0.683, MRR 0.416). The
// description counts most; a task's rare words count less than plain
// BM25 would have them (IDFPower), since users name the topic of their
// content ("climate", "coffee brand") beside the task itself.
var DefaultWeights = Weights{
	Fields: [numFields]FieldWeight{
		FieldName:        {Weight: 1.4, B: 0.75},
		FieldDisplayName: {Weight: 0.5, B: 0.75},
		FieldDescription: {Weight: 3, B: 0.4},
		FieldBody:        {Weight: 0.5, B: 0.75},
		FieldHeadings:    {Weight: 1.4, B: 0.4},
		FieldFiles:       {Weight: 2, B: 0.75},
		FieldCategory:    {Weight: 1, B: 0.75}, // no category in the corpus: untuned
		FieldLabels:      {Weight: 0.5, B: 0.75},
	},
	K1:       1.2,
	IDFPower: 0.5,
}
