// Package search ranks skills against a task: language-aware analysis
// (Snowball stemming and stop words for English and Spanish, accents folded),
// an immutable inverted index per layer with BM25F over a skill's name,
// description, body, headings, file names, category and labels, search
// across several layers with global document frequencies, and near-duplicate
// detection that folds copies and forks of one skill into one hit.
//
// The package is pure: the catalog analyzes each SKILL.md once (Analyze,
// cacheable through Analyzed's codec), builds one Index per layer state
// (Builder, reusing unchanged documents of the previous Index), persists it
// (MarshalBinary) and searches the caller's layers with Search.
package search
