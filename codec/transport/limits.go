package transport

import "time"

// Limits are ServerConfig's bounds as the servers' config files spell them
// (broker.conf and namesrv.conf keys of the same names, camelCase); a zero
// field means the transport's default. DefaultLimits returns the defaults
// spelled out, so `-p` prints what applies.
type Limits struct {
	// WriteBufferHighWaterMark / WriteBufferLowWaterMark: Java's
	// NettyServerConfig keys. Java only marks the channel unwritable; here
	// a connection's requests stop being read above the high mark and are
	// read again at or below the low one.
	WriteBufferHighWaterMark         int64
	WriteBufferLowWaterMark          int64
	MaxUnsentBytesPerConnection      int64
	MaxUnsentBytesTotal              int64
	MaxInflightRequestsPerConnection int
	MaxUnreadBytesPerConnection      int64
	MaxUnreadBytesTotal              int64
	// FrameReadTimeoutMillis: negative disables the frame deadline.
	FrameReadTimeoutMillis int64
	MaxHeaderLength        int
	// WriteStallTimeoutMillis: negative disables the write-stall cut.
	WriteStallTimeoutMillis int64
}

// DefaultLimits returns the transport's defaults.
func DefaultLimits() Limits {
	return Limits{
		WriteBufferHighWaterMark:         DefaultWriteHighWater,
		WriteBufferLowWaterMark:          DefaultWriteLowWater,
		MaxUnsentBytesPerConnection:      DefaultMaxUnsentPerConn,
		MaxUnsentBytesTotal:              DefaultMaxUnsentTotal,
		MaxInflightRequestsPerConnection: DefaultMaxInflightPerConn,
		MaxUnreadBytesPerConnection:      DefaultMaxUnreadPerConn,
		MaxUnreadBytesTotal:              DefaultMaxUnreadTotal,
		FrameReadTimeoutMillis:           DefaultFrameReadTimeout.Milliseconds(),
		MaxHeaderLength:                  DefaultMaxHeaderLength,
		WriteStallTimeoutMillis:          DefaultWriteStallTimeout.Milliseconds(),
	}
}

// Apply returns cfg with l's bounds set.
func (l Limits) Apply(cfg ServerConfig) ServerConfig {
	cfg.WriteHighWater = l.WriteBufferHighWaterMark
	cfg.WriteLowWater = l.WriteBufferLowWaterMark
	cfg.MaxUnsentPerConn = l.MaxUnsentBytesPerConnection
	cfg.MaxUnsentTotal = l.MaxUnsentBytesTotal
	cfg.MaxInflightPerConn = l.MaxInflightRequestsPerConnection
	cfg.MaxUnreadPerConn = l.MaxUnreadBytesPerConnection
	cfg.MaxUnreadTotal = l.MaxUnreadBytesTotal
	cfg.FrameReadTimeout = time.Duration(l.FrameReadTimeoutMillis) * time.Millisecond
	cfg.MaxHeaderLength = l.MaxHeaderLength
	cfg.WriteStallTimeout = time.Duration(l.WriteStallTimeoutMillis) * time.Millisecond
	return cfg
}
