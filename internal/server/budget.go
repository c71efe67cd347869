package server

// fitReply returns how many of the first n items of a reply, the i-th
// encoding to size(i) bytes, stay within budget bytes
// (--skills.max-page-bytes), so every reply fits a client's default 4 MiB
// receive limit: at least one, as any one skill fits. size is called once
// per item, in order, up to the first that does not fit, so a caller can
// build each item of the reply while measuring it.
func fitReply(n, budget int, size func(i int) int) int {
	total := 0
	for i := range n {
		if total += size(i); total > budget && i > 0 {
			return i
		}
	}
	return n
}
