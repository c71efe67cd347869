// Package settings stores what users and libraries keep beside their skills:
// each user's settings object (disabled skills and the user's own scopes),
// read through the shared cache and written with conditional writes, and
// each shared or team library's side object (its protected skill names and
// scopes). It holds the stored forms and their bounds; how a view applies
// them (compiling a scope, composing protected layers) is internal/skills'.
package settings
