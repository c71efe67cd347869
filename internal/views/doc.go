// Package views builds each caller's view (skillview.View) from the library
// indexes and holds its parts on the memory budget while the indexes stay
// the same generation: the shared and team layers once per replica, a
// user's overlay per user, the parsed SKILL.md heads (shared through the
// cache between replicas), and the frozen views of pinned threads built
// from their snapshots. internal/skills answers the catalog's queries with
// the views it returns.
package views
