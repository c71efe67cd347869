package skills

// WaitEmbeddings waits for the layers' vectors being made in the
// background, for tests.
func WaitEmbeddings(c *Catalog) { c.searchIx.embedWG.Wait() }
