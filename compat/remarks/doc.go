// Package remarks holds the exact remark strings the Java name server and
// broker put in responses, so tools that match on them (and humans reading
// client logs) see the same text from us. Functions build the ones with
// arguments; nothing here is on a hot path except by accident.
package remarks
