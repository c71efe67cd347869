package search

// DefaultWeights are the ranking parameters the service uses, chosen by
// TestTuneWeights (coordinate search, SEARCH_TUNE=1) on the 107 "tune"
// requests of test/selection against its 10,000-skill corpus (archive
// sha256 69b19911...) and the 17 targets; the 63 "holdout" requests were
// only reported. 2026-11-29:
//
//	                 split    Hit@1  Recall@3  Recall@10  MRR
//	neutral weights  holdout  0.317  0.476     0.667      0.421
//	no CopyBoost     holdout  0.317  0.540     0.746      0.459
//	DefaultWeights   tune     0.523  0.682     0.822      0.612
//	DefaultWeights   holdout  0.460  0.651     0.794      0.573
//
// The description counts most; a task's rare words count less than plain
// BM25 would have them (IDFPower), since users name the topic of their
// content ("climate", "coffee brand") beside the task itself; a skill with
// copies across the library leads a little more relevant one (CopyBoost:
// 0.2 was the tune split's best of 0, 0.2, 0.4, 0.8 and 1.6).
var DefaultWeights = Weights{
	Fields: [numFields]FieldWeight{
		FieldName:        {Weight: 1.96, B: 0.75},
		FieldDisplayName: {Weight: 0.5, B: 0.75},
		FieldDescription: {Weight: 8.82, B: 1},
		FieldBody:        {Weight: 0.5, B: 0.8},
		FieldHeadings:    {Weight: 1.96, B: 0.6},
		FieldFiles:       {Weight: 0.7, B: 0},
		FieldCategory:    {Weight: 1, B: 0.75}, // no category in the corpus: untuned
		FieldLabels:      {Weight: 0.5, B: 0.75},
	},
	K1:        1.2,
	IDFPower:  0.25,
	CopyBoost: 0.2,
}
