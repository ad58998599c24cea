package telemetry

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Series is the shape of one series name in a text exposition: what the
// golden comparison with the Java broker looks at (values are ignored).
type Series struct {
	Type    string    // the # TYPE of its family: counter, gauge, histogram, info …
	Labels  []string  // label names seen on it, sorted, without le
	Buckets []float64 // a histogram's le bounds, sorted, without +Inf
}

func (s Series) String() string {
	return fmt.Sprintf("%s labels=%s buckets=%v", s.Type, strings.Join(s.Labels, ","), s.Buckets)
}

// Shape parses a Prometheus text exposition into its series shapes, by
// series name; a histogram's _bucket, _sum and _count fold into one name.
// It is lenient where Java's exporter is odd: a # TYPE line names the
// family without the unit its samples carry, so the type applies to the
// samples that follow it whatever their names.
func Shape(text []byte) (map[string]Series, error) {
	out := map[string]Series{}
	typ := ""
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			if f := strings.Fields(line); len(f) >= 4 && f[1] == "TYPE" {
				typ = f[3]
			}
			continue
		}
		name, labels, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics: line %d: %w", n, err)
		}
		base := name
		if typ == "histogram" {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(name, suf); ok {
					base = b
					break
				}
			}
		}
		s := out[base]
		s.Type = typ
		for k, v := range labels {
			if k == "le" {
				if f, err := strconv.ParseFloat(v, 64); err == nil && v != "+Inf" && !slices.Contains(s.Buckets, f) {
					s.Buckets = append(s.Buckets, f)
				}
				continue
			}
			if !slices.Contains(s.Labels, k) {
				s.Labels = append(s.Labels, k)
			}
		}
		slices.Sort(s.Labels)
		slices.Sort(s.Buckets)
		out[base] = s
	}
	return out, sc.Err()
}

// parseSample splits `name{k="v",…} value [ts]` into the name and labels.
func parseSample(line string) (string, map[string]string, error) {
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", nil, fmt.Errorf("no value in %q", line)
	}
	name, rest := line[:i], line[i:]
	labels := map[string]string{}
	if rest[0] != '{' {
		return name, labels, nil
	}
	rest = rest[1:]
	for {
		rest = strings.TrimLeft(rest, " ,")
		if rest == "" {
			return "", nil, fmt.Errorf("unterminated labels in %q", line)
		}
		if rest[0] == '}' {
			return name, labels, nil
		}
		eq := strings.IndexByte(rest, '=')
		if eq < 0 || len(rest) < eq+2 || rest[eq+1] != '"' {
			return "", nil, fmt.Errorf("bad label in %q", line)
		}
		key := rest[:eq]
		rest = rest[eq+2:]
		var v strings.Builder
		j := 0
		for ; j < len(rest) && rest[j] != '"'; j++ {
			if rest[j] == '\\' && j+1 < len(rest) {
				j++
			}
			v.WriteByte(rest[j])
		}
		if j >= len(rest) {
			return "", nil, fmt.Errorf("unterminated label value in %q", line)
		}
		labels[key] = v.String()
		rest = rest[j+1:]
	}
}

// Value sums the samples named name whose labels include every pair of
// match (a test's reading of one series from a scrape).
func Value(text []byte, name string, match map[string]string) (sum float64, found bool) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, name) {
			continue
		}
		n, labels, err := parseSample(line)
		if err != nil || n != name {
			continue
		}
		ok := true
		for k, v := range match {
			if labels[k] != v {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		rest := line[strings.LastIndexByte(line, '}')+1:]
		if !strings.Contains(line, "{") {
			rest = line[len(name):]
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		sum += v
		found = true
	}
	return sum, found
}
