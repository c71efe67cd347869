// Package layout is the bucket layout: where each library (a user's, a
// team's, the organization's shared one) keeps its skill folders, its
// persisted index and protected list, where a user's settings live, and
// where a library keeps what lies outside every mount (its versions root:
// published versions, content-addressed blobs, pinned threads' snapshots
// and pins). Every key template (the --skills.* and --library.* key flags)
// is rendered and parsed here alone: the rest of skillsvc asks a Layout for
// a key, and ChangeOf for the library a changed key belongs to.
package layout
