package transport

// Conn is one TCP connection as handlers see it. (Being built: see the
// transport helper's API in README of this package.)
type Conn struct {
	remote string
}

// RemoteAddr is the peer's "ip:port".
func (c *Conn) RemoteAddr() string { return c.remote }
