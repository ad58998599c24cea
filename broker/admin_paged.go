package broker

import (
	"math"

	"github.com/rocketgo/rocketgo/codec/body"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// Java 5.4.0 splits GET_ALL_TOPIC_CONFIG and GET_ALL_SUBSCRIPTIONGROUP_CONFIG
// into pages (enableSplitMetadata, splitMetadataSize): a request carrying
// topicSeq/groupSeq, maxTopicNum/maxGroupNum or dataVersion gets the entries
// [seq, seq+n) of the table sorted by name, n the smaller of the two sizes;
// a request with none of them (a 5.3.3 slave, mqadmin up to 5.3.3, the Go
// admin) gets the whole table, as from a 5.3.3 broker. Either answer names
// the whole table's size (totalTopicNum/totalGroupNum).
//
// defaultSplitMetadataSize is BrokerConfig.splitMetadataSize's default.
const defaultSplitMetadataSize = 2000

// metadataPage is what a paged request asks.
type metadataPage struct {
	paged       bool   // one of the three fields came (Java: not ObjectUtils.allNull)
	seq         int32  // topicSeq / groupSeq
	max         int32  // the page size asked, when hasMax
	hasMax      bool   // maxTopicNum / maxGroupNum came
	dataVersion string // the version the asker's first page had, JSON; "" on the first page
}

// pageRange is the slice [lo, hi) of a table of size entries that the
// request gets, the table being at version current; split is
// splitMetadataSize. Like Java (TopicConfigManager.subTopicConfigTable):
// a blank or different dataVersion restarts at 0, so an asker whose table
// moved under it starts over.
//
// compat: Java fails the request (a runtime exception, SYSTEM_ERROR) on a
// negative seq, a page size below 1 or a missing seq beside the other
// fields; we answer a negative or missing seq from 0 and a size below 1
// with an empty page.
func (p metadataPage) pageRange(size int, current body.TopicVersion, split int) (lo, hi int) {
	n := split
	if p.hasMax && int(p.max) < n {
		n = int(p.max)
	}
	lo = int(p.seq)
	if lo < 0 || !sameDataVersion(p.dataVersion, current) {
		lo = 0
	}
	if n <= 0 || lo >= size {
		return 0, 0
	}
	hi = size
	if n < size-lo {
		hi = lo + n
	}
	return lo, hi
}

// sameDataVersion reports whether the JSON DataVersion s equals v (Java's
// DataVersion.equals: stateVersion, timestamp and counter). A blank or
// unreadable s never does.
func sameDataVersion(s string, v body.TopicVersion) bool {
	if s == "" {
		return false
	}
	var got body.TopicVersion
	if err := fastjson.Unmarshal(body.QuoteBareKeys([]byte(s)), &got); err != nil {
		return false
	}
	return got == v
}

// splitSize is splitMetadataSize as an int (bounded at start and update).
// newMetadataPage reads a paged request's fields: it is paged when any
// of the three came.
func newMetadataPage(hasSeq bool, seq int32, hasMax bool, max int32, dataVersion string) metadataPage {
	return metadataPage{paged: hasSeq || hasMax || dataVersion != "", seq: seq, max: max, hasMax: hasMax, dataVersion: dataVersion}
}

// pageOf is what of a table at version v the request gets: all of it,
// unless it asked for a page and splitMetadata is on.
func pageOf[T any](p metadataPage, items []T, v body.TopicVersion, l *liveConfig) []T {
	if !p.paged || !l.splitMetadata.Load() {
		return items
	}
	lo, hi := p.pageRange(len(items), v, splitSize(l))
	return items[lo:hi]
}

func splitSize(l *liveConfig) int {
	n := l.splitMetadataSize.Load()
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}
