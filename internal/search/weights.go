package search

// DefaultWeights are the BM25F parameters the service ranks with.
//
// Provisional (hand-set) until the tuning run on the corpus
// (TestTuneWeights, docs/selection.md "Ranking") replaces them.
var DefaultWeights = Weights{
	Fields: [numFields]FieldWeight{
		FieldName:        {Weight: 3, B: 0.5},
		FieldDisplayName: {Weight: 2, B: 0.5},
		FieldDescription: {Weight: 2, B: 0.75},
		FieldBody:        {Weight: 0.3, B: 0.75},
		FieldHeadings:    {Weight: 1, B: 0.75},
		FieldFiles:       {Weight: 0.5, B: 0.75},
		FieldCategory:    {Weight: 1.5, B: 0.5},
		FieldLabels:      {Weight: 2, B: 0.5},
	},
	K1: 1.2,
}
