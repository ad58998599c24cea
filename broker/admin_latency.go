package broker

import (
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/store"
)

// putRangeNames are putMessageDistributeTime's range names, in order.
var putRangeNames = [store.PutRanges]string{"[<=0ms]", "[0~10ms]", "[10~50ms]", "[50~100ms]", "[100~200ms]",
	"[200~500ms]", "[500ms~1s]", "[1~2s]", "[2~3s]", "[3~4s]", "[4~5s]", "[5~10s]", "[10s~]"}

// putLatencyKeys adds StoreStatsService's latency keys to the runtime
// table: putMessageEntireTimeMax and getMessageEntireTimeMax (ms, since
// the store opened), putMessageDistributeTime (the last ended minute's
// puts per range, "name:count " each; compat: "null" until a minute has
// ended, as Java prints it, which rocketmq-exporter skips) and
// putLatency99/putLatency999 (that minute's percentiles, "%.2f").
func putLatencyKeys(kv map[string]string, f store.LatencyFigures) {
	kv["putMessageEntireTimeMax"] = strconv.FormatInt(f.PutMax, 10)
	kv["getMessageEntireTimeMax"] = strconv.FormatInt(f.GetMax, 10)
	kv["putLatency99"] = javaFixed2(f.P99)
	kv["putLatency999"] = javaFixed2(f.P999)
	if !f.Ended {
		kv["putMessageDistributeTime"] = "null"
		return
	}
	var b strings.Builder
	for i, name := range putRangeNames {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(f.Ranges[i], 10))
		b.WriteByte(' ')
	}
	kv["putMessageDistributeTime"] = b.String()
}

// javaFixed2 is Java's String.format("%.2f", v): the shortest decimal of
// v rounded half up to two places ("0.13" for 0.125, where Go's %.2f
// rounds the binary value half to even).
func javaFixed2(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if strings.ContainsAny(s, "NI") { // NaN, +Inf, -Inf
		return map[string]string{"NaN": "NaN", "+Inf": "Infinity", "-Inf": "-Infinity"}[s]
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	frac += "000"
	digits := []byte(intPart + frac[:2])
	if frac[2] >= '5' {
		i := len(digits) - 1
		for ; i >= 0 && digits[i] == '9'; i-- {
			digits[i] = '0'
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		} else {
			digits[i]++
		}
	}
	out := string(digits[:len(digits)-2]) + "." + string(digits[len(digits)-2:])
	if neg {
		out = "-" + out // Java keeps the sign of a value that rounds to 0
	}
	return out
}
