package skills

// WaitEmbeddings waits for the layers' vectors being made in the
// background (tests).
func WaitEmbeddings(c *Catalog) { c.searchIx.Wait() }
