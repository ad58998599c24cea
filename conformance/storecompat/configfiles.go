package storecompat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// ConfigFiles are the broker config files compared between writers.
var ConfigFiles = []string{"topics.json", "consumerOffset.json", "subscriptionGroup.json"}

// ReadConfigFiles returns the content of store/config/<name> for each of
// ConfigFiles that exists.
func ReadConfigFiles(store string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, n := range ConfigFiles {
		b, err := os.ReadFile(filepath.Join(store, "config", n))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("storecompat: read %s: %w", n, err)
		}
		out[n] = b
	}
	return out, nil
}

// tables are JSON objects whose keys are data (topic, group, queue id), so
// their keys are folded into "*" when comparing shapes.
var tables = map[string]bool{
	"topicConfigTable": true, "offsetTable": true, "subscriptionGroupTable": true,
	"forbiddenTable": true, "topicQueueMappingInfoMap": true,
}

// Shape returns the set of field paths of a JSON document (fastjson's bare
// integer keys accepted), with data-keyed tables folded to "*" and integer
// keys to "#", e.g. "topicConfigTable.*.readQueueNums", "offsetTable.*.#".
func Shape(doc []byte) (map[string]bool, error) {
	var v any
	if err := json.Unmarshal(LenientJSON(doc), &v); err != nil {
		return nil, fmt.Errorf("storecompat: not JSON: %w", err)
	}
	out := map[string]bool{}
	var walk func(path string, v any, table bool)
	walk = func(path string, v any, table bool) {
		obj, ok := v.(map[string]any)
		if !ok {
			out[path] = true
			return
		}
		if len(obj) == 0 {
			out[path+"{}"] = true
		}
		for k, c := range obj {
			name := k
			if _, err := strconv.ParseInt(k, 10, 64); err == nil {
				name = "#" // queue ids
			}
			if table {
				name = "*"
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			walk(p, c, tables[k] && !table)
		}
	}
	walk("", v, false)
	return out, nil
}

// ShapeDiff lists the field paths only one of two documents has.
func ShapeDiff(a, b []byte) (onlyA, onlyB []string, err error) {
	sa, err := Shape(a)
	if err != nil {
		return nil, nil, err
	}
	sb, err := Shape(b)
	if err != nil {
		return nil, nil, err
	}
	for p := range sa {
		if !sb[p] {
			onlyA = append(onlyA, p)
		}
	}
	for p := range sb {
		if !sa[p] {
			onlyB = append(onlyB, p)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB, nil
}

// tableOf names the data-keyed table of each config file.
var tableOf = map[string]string{
	"topics.json": "topicConfigTable", "consumerOffset.json": "offsetTable",
	"subscriptionGroup.json": "subscriptionGroupTable",
}

// TableKeyDiff lists the entries (topics, groups, topic@group) of a config
// file's table that only one of two versions of the file has.
func TableKeyDiff(name string, a, b []byte) (onlyA, onlyB []string, err error) {
	keys := func(doc []byte) (map[string]bool, error) {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(LenientJSON(doc), &top); err != nil {
			return nil, fmt.Errorf("storecompat: %s: %w", name, err)
		}
		var table map[string]json.RawMessage
		if raw, ok := top[tableOf[name]]; ok {
			if err := json.Unmarshal(raw, &table); err != nil {
				return nil, fmt.Errorf("storecompat: %s table: %w", name, err)
			}
		}
		out := map[string]bool{}
		for k := range table {
			out[k] = true
		}
		return out, nil
	}
	ka, err := keys(a)
	if err != nil {
		return nil, nil, err
	}
	kb, err := keys(b)
	if err != nil {
		return nil, nil, err
	}
	for k := range ka {
		if !kb[k] {
			onlyA = append(onlyA, k)
		}
	}
	for k := range kb {
		if !ka[k] {
			onlyB = append(onlyB, k)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB, nil
}
