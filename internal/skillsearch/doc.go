// Package skillsearch holds the search side of the skills catalog: each
// library layer's search index (built once per generation of the layer,
// held on the replica's memory budget, its skills' analyses shared through
// the cache), the optional semantic stage (embeddings), and what a search
// ranks across a caller's layers. It knows a layer only as its folders
// (Layer); which of them a caller's view serves is the catalog's rule,
// handed in as each layer's Skip.
package skillsearch
