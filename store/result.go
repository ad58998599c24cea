package store

// PutStatus is the outcome of an append (Java PutMessageStatus).
type PutStatus int

// Put statuses.
const (
	PutOK PutStatus = iota
	FlushDiskTimeout
	ServiceNotAvailable
	MessageIllegal
	PropertiesSizeExceeded
	OSPageCacheBusy
	UnknownError
	// FlushSlaveTimeout: stored, but not acknowledged by the slaves the
	// put needs within SlaveTimeout (Java FLUSH_SLAVE_TIMEOUT).
	FlushSlaveTimeout
)

var putStatusNames = [...]string{"PUT_OK", "FLUSH_DISK_TIMEOUT", "SERVICE_NOT_AVAILABLE",
	"MESSAGE_ILLEGAL", "PROPERTIES_SIZE_EXCEEDED", "OS_PAGE_CACHE_BUSY", "UNKNOWN_ERROR", "FLUSH_SLAVE_TIMEOUT"}

func (s PutStatus) String() string {
	if int(s) < len(putStatusNames) {
		return putStatusNames[s]
	}
	return "UNKNOWN_ERROR"
}

// PutResult reports one Put or PutBatch.
type PutResult struct {
	Status         PutStatus
	WroteOffset    int64 // commit-log offset of the (first) record
	WroteBytes     int32 // bytes appended (all records of a batch)
	QueueOffset    int64 // queue offset of the (first) record
	MsgCount       int32
	StoreTimestamp int64
	Appended       int64 // Unix nanoseconds when the append finished (before any flush or replica wait)
	Err            error // detail for non-OK statuses
}

// GetStatus is the outcome of GetMessages (Java GetMessageStatus).
type GetStatus int

// Get statuses.
const (
	Found GetStatus = iota
	NoMatchedMessage
	MessageWasRemoving
	OffsetFoundNull
	OffsetOverflowBadly
	OffsetOverflowOne
	OffsetTooSmall
	NoMatchedLogicQueue
	NoMessageInQueue
)

var getStatusNames = [...]string{"FOUND", "NO_MATCHED_MESSAGE", "MESSAGE_WAS_REMOVING",
	"OFFSET_FOUND_NULL", "OFFSET_OVERFLOW_BADLY", "OFFSET_OVERFLOW_ONE", "OFFSET_TOO_SMALL",
	"NO_MATCHED_LOGIC_QUEUE", "NO_MESSAGE_IN_QUEUE"}

func (s GetStatus) String() string {
	if int(s) < len(getStatusNames) {
		return getStatusNames[s]
	}
	return "UNKNOWN"
}

// Filter selects messages during GetMessages. Nil fields match everything.
type Filter struct {
	// CQ sees the consume-queue tags code (cheap, before reading the record).
	CQ func(tagsCode int64) bool
	// Record sees the whole stored record (properties filters, SQL92).
	Record func(record []byte) bool
}

// GetResult is filled by GetMessages; reuse it across calls and Release it
// when the records have been written out.
type GetResult struct {
	Status          GetStatus
	NextBeginOffset int64
	MinOffset       int64
	MaxOffset       int64
	// Records are views into mapped commit-log segments, valid until
	// Release. QueueOffsets[i] is the queue offset of Records[i].
	Records      [][]byte
	QueueOffsets []int64
	TotalBytes   int
	SuggestSlave bool

	segs []*segment // references held until Release
	phys []int64    // commit-log offset of each record
}

// Release drops the segment references; Records become invalid.
func (r *GetResult) Release() {
	for i, s := range r.segs {
		s.release()
		r.segs[i] = nil
	}
	r.segs = r.segs[:0]
	clear(r.Records)
	r.Records = r.Records[:0]
	r.QueueOffsets = r.QueueOffsets[:0]
	r.phys = r.phys[:0]
	r.TotalBytes = 0
}

func (r *GetResult) reset() {
	r.Release()
	*r = GetResult{Records: r.Records, QueueOffsets: r.QueueOffsets, segs: r.segs, phys: r.phys}
}

func (r *GetResult) hold(s *segment) {
	for _, h := range r.segs {
		if h == s {
			return
		}
	}
	s.acquire()
	r.segs = append(r.segs, s)
}
