package body

import (
	"fmt"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// KVEntry is one key/value pair of a KV table.
type KVEntry struct {
	Key, Value string
}

// AppendKVTable writes {"table":{"k":"v",…}} (GET_KVLIST_BY_NAMESPACE and
// the REGISTER_BROKER response body).
func AppendKVTable(dst []byte, table []KVEntry) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.Key("table")
	writeKVs(&w, table)
	w.ObjectEnd()
	return w.Buf
}

func writeKVs(w *fastjson.Writer, table []KVEntry) {
	w.ObjectStart()
	for _, kv := range table {
		w.StringField(kv.Key, kv.Value)
	}
	w.ObjectEnd()
}

// DecodeKVTable reads {"table":{…}}.
func DecodeKVTable(b []byte) ([]KVEntry, error) {
	var out []KVEntry
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() == "table" {
			out = readKVs(rd)
		} else {
			rd.Skip()
		}
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("body: kv table: %w", err)
	}
	return out, nil
}

func readKVs(rd *fastjson.Reader) []KVEntry {
	out := []KVEntry{}
	for rd.ObjectStart(); rd.More(); {
		k := rd.Key()
		out = append(out, KVEntry{k, rd.String()})
	}
	return out
}

// KVNamespace is one namespace of the name server's KV store.
type KVNamespace struct {
	Namespace string
	Table     []KVEntry
}

// AppendKVConfigFile writes kvConfig.json: {"configTable":{"<ns>":{"k":"v"}}}.
func AppendKVConfigFile(dst []byte, namespaces []KVNamespace) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.Key("configTable")
	w.ObjectStart()
	for _, ns := range namespaces {
		w.Key(ns.Namespace)
		writeKVs(&w, ns.Table)
	}
	w.ObjectEnd()
	w.ObjectEnd()
	return w.Buf
}

// DecodeKVConfigFile reads kvConfig.json as Java or we wrote it.
func DecodeKVConfigFile(b []byte) ([]KVNamespace, error) {
	var out []KVNamespace
	rd := fastjson.NewReader(b)
	for rd.ObjectStart(); rd.More(); {
		if rd.Key() != "configTable" {
			rd.Skip()
			continue
		}
		for rd.ObjectStart(); rd.More(); {
			ns := KVNamespace{Namespace: rd.Key()}
			ns.Table = readKVs(rd)
			out = append(out, ns)
		}
	}
	if err := rd.End(); err != nil {
		return nil, fmt.Errorf("body: kv config file: %w", err)
	}
	return out, nil
}
