// Package events keeps the skills libraries fresh from object storage's own
// change notifications instead of polling alone. MinIO (a webhook target)
// and AWS S3 publish an S3 event record for every object created or
// removed; the Receiver accepts them on an authenticated HTTP endpoint, maps
// each key to the library it touches (skills.Catalog.ChangeOf), drops that
// library's index on this replica and in the shared cache (the path of the
// admin's DropSkillIndex), and tells the other replicas through a Redis
// pub/sub topic, so each forgets its own copy at once. A replica whose
// subscription is (re)established forgets every index it holds, since it may
// have missed messages; polling (--skills.index-refresh) remains the bound
// for anything else missed. The drops are paced (dropQueue): coalesced per
// library, rate- and concurrency-bounded per replica, in a bounded queue,
// so a burst of events costs Redis and storage O(libraries), never O(records).
package events
