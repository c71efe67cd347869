package local

import "math/rand/v2"

func randUint64() uint64 { return rand.Uint64() }
