package testserver

// RunMinIO starts a MinIO server outside a test, for tools such as
// cmd/bench-load that need real servers but have no testing.TB. The caller
// must call stop, which kills the server and removes its data; it is safe to
// call more than once. env is added to its environment, as StartMinIO's.
func RunMinIO(env ...string) (m *MinIO, stop func(), err error) {
	m, p, err := startMinIOWithEnv(env)
	if err != nil {
		return nil, nil, err
	}
	return m, p.stop, nil
}

// RunRedis starts a redis-server outside a test; see RunMinIO.
func RunRedis() (r *Redis, stop func(), err error) {
	r, p, err := startRedis()
	if err != nil {
		return nil, nil, err
	}
	return r, p.stop, nil
}
