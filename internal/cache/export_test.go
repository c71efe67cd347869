package cache

// WriteUnder makes r write under o's keys, as a deployment given a key
// prefix that ends where o's keyspace does would: what o must refuse.
func (r *Redis) WriteUnder(o *Redis) { r.prefix = o.prefix }
