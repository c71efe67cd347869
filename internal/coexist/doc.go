// Package coexist is a publish's coexistence check: the candidate folder
// searched for among the target library's skills (its description and its
// eval_queries.json as requests), with warnings for the skills it
// competes with or near-duplicates and each eval query's rank. It only
// warns; the library package runs it and keeps its findings on the
// version for a reviewer.
package coexist
