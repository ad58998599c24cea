package filter

import "unsafe"

func unsafeString(b []byte) string { return unsafe.String(&b[0], len(b)) }
