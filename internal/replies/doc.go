// Package replies keeps the encoded replies of the skills service at the
// edge: ListSkills pages, FormatSkills blocks, SearchSkills and GetSkill
// replies, as bytes under the key of the catalog snapshot they were made
// from (skills.Snapshot), within a byte budget per replica and, with Redis,
// in a shared tier every replica reads. It knows nothing of what a reply
// holds: the server encodes a miss from the snapshot whose key it asked for.
package replies
