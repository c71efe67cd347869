// Package skillview is the catalog's pure view model: a library's files and
// skill folders as one layer (Layer, Ref), a user's layer over the shared or
// team layers beneath it (Overlay, View), and the rules read from them
// without I/O or caching: composition by precedence, protected names,
// scopes, duplicate names, manifests and digests, and the heap each part
// keeps alive. internal/skills builds and caches these values from the
// library indexes and answers the catalog's queries with them.
package skillview
