package remarks

import "strconv"

// TimeoutCleanQueue is the SYSTEM_BUSY remark of Java's BrokerFastFailure
// for a request that waited too long in its queue.
func TimeoutCleanQueue(waitedMs int64, queueSize int) string {
	return "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: " +
		strconv.FormatInt(waitedMs, 10) + "ms, size of queue: " + strconv.Itoa(queueSize)
}

// ProcessRequestPanic is the SYSTEM_ERROR of a handler that panicked;
// desc is the panic value as text.
func ProcessRequestPanic(desc string) string { return "process request panic: " + desc }
