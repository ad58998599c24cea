package main

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

type field struct {
	key    string // extFields key, exact
	goName string
	typ    string // string int32 int64 bool
	req    bool
	def    string // default, Go literal form; "" = zero
	v1     string // explicit Go name of the V1 counterpart
	doc    string
	res    string // @RocketMQResource type: Topic Group Cluster …; "" = none
	split  string // its splitter, "" = one value
	has    bool   // Decode records its presence: Has<GoName>()
}

type header struct {
	goName   string
	java     string // Java class, "-" when not a class
	doc      []string
	fields   []field
	v1       string   // Go name of the V1 header, if conversions are wanted
	requests []string // Java request codes whose request carries this header
	actions  []string // @RocketMQAction actions (Pub Sub …); nil = not annotated
	resource string   // @RocketMQAction resource type, "" = Java's default (UNKNOWN)
	replies  []string // Java request codes whose response carries this header
	line     int
}

type headerFile struct {
	name    string
	headers []*header
}

type spec struct {
	files   []*headerFile
	byName  map[string]*header
	mixins  map[string][]field
	allHdrs []*header
}

var goTypes = map[string]bool{"string": true, "int32": true, "int64": true, "bool": true}

// authActions and resourceTypes are the names of Java's auth Action and
// ResourceType constants, as headers.def spells them.
var (
	authActions   = map[string]bool{"All": true, "Any": true, "Pub": true, "Sub": true, "Create": true, "Update": true, "Delete": true, "Get": true, "List": true}
	resourceTypes = map[string]bool{"Any": true, "Cluster": true, "Namespace": true, "Topic": true, "Group": true}
)

// parseHeaders reads headers.def (format documented at its top).
func parseHeaders(src string) ([]*headerFile, error) {
	sp := &spec{byName: map[string]*header{}, mixins: map[string][]field{}}
	var (
		file     *headerFile
		cur      *header
		curMixin string
		pending  []string // comment lines directly above a header
		uses     []string // use= of cur, appended at the end
	)
	finish := func() error {
		if cur == nil {
			return nil
		}
		for _, u := range uses {
			fs, ok := sp.mixins[u]
			if !ok {
				return fmt.Errorf("line %d: unknown mixin %q", cur.line, u)
			}
			cur.fields = append(cur.fields, fs...)
		}
		seenKey, seenGo := map[string]bool{}, map[string]bool{}
		for _, f := range cur.fields {
			if seenKey[f.key] || seenGo[f.goName] {
				return fmt.Errorf("line %d: header %s: duplicate field %s/%s", cur.line, cur.goName, f.key, f.goName)
			}
			seenKey[f.key], seenGo[f.goName] = true, true
		}
		if len(cur.fields) > 64 {
			return fmt.Errorf("line %d: header %s: more than 64 fields", cur.line, cur.goName)
		}
		cur, uses = nil, nil
		return nil
	}
	for i, raw := range strings.Split(src, "\n") {
		ln := i + 1
		text, comment, _ := strings.Cut(raw, "#")
		comment = strings.TrimSpace(comment)
		fields := strings.Fields(text)
		if len(fields) == 0 {
			if strings.TrimSpace(raw) == "" {
				pending = nil
			} else if !strings.HasPrefix(raw, " ") {
				pending = append(pending, comment)
			}
			continue
		}
		indented := raw[0] == ' ' || raw[0] == '\t'
		if !indented {
			if err := finish(); err != nil {
				return nil, err
			}
			curMixin = ""
			switch fields[0] {
			case "file":
				if len(fields) != 2 {
					return nil, fmt.Errorf("line %d: want `file NAME`", ln)
				}
				file = &headerFile{name: fields[1]}
				sp.files = append(sp.files, file)
			case "mixin":
				if len(fields) != 2 {
					return nil, fmt.Errorf("line %d: want `mixin NAME`", ln)
				}
				curMixin = fields[1]
				sp.mixins[curMixin] = nil
			case "header":
				if file == nil {
					return nil, fmt.Errorf("line %d: header before any `file`", ln)
				}
				if len(fields) < 2 {
					return nil, fmt.Errorf("line %d: want `header GoName java=Class ...`", ln)
				}
				h := &header{goName: fields[1], doc: pending, line: ln}
				if sp.byName[h.goName] != nil {
					return nil, fmt.Errorf("line %d: header %s declared twice", ln, h.goName)
				}
				for _, attr := range fields[2:] {
					k, v, ok := strings.Cut(attr, "=")
					if !ok {
						return nil, fmt.Errorf("line %d: bad attribute %q", ln, attr)
					}
					switch k {
					case "java":
						h.java = v
					case "use":
						uses = append(uses, v)
					case "v1":
						h.v1 = v
					case "req":
						h.requests = append(h.requests, strings.Split(v, ",")...)
					case "resp":
						h.replies = append(h.replies, strings.Split(v, ",")...)
					case "action":
						for _, a := range strings.Split(v, "|") {
							if !authActions[a] {
								return nil, fmt.Errorf("line %d: unknown action %q", ln, a)
							}
							h.actions = append(h.actions, a)
						}
					case "resource":
						if !resourceTypes[v] {
							return nil, fmt.Errorf("line %d: unknown resource type %q", ln, v)
						}
						h.resource = v
					default:
						return nil, fmt.Errorf("line %d: unknown attribute %q", ln, k)
					}
				}
				if h.java == "" {
					return nil, fmt.Errorf("line %d: header %s lacks java=", ln, h.goName)
				}
				sp.byName[h.goName] = h
				file.headers = append(file.headers, h)
				sp.allHdrs = append(sp.allHdrs, h)
				cur = h
			default:
				return nil, fmt.Errorf("line %d: unknown directive %q", ln, fields[0])
			}
			pending = nil
			continue
		}
		if cur == nil && curMixin == "" {
			return nil, fmt.Errorf("line %d: field outside a header or mixin", ln)
		}
		var fs []field
		if fields[0] == "use" {
			if len(fields) != 2 {
				return nil, fmt.Errorf("line %d: want `use MIXIN`", ln)
			}
			m, ok := sp.mixins[fields[1]]
			if !ok {
				return nil, fmt.Errorf("line %d: unknown mixin %q", ln, fields[1])
			}
			fs = m
		} else {
			f, err := parseField(fields, comment)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", ln, err)
			}
			fs = []field{f}
		}
		if curMixin != "" {
			sp.mixins[curMixin] = append(sp.mixins[curMixin], fs...)
		} else {
			cur.fields = append(cur.fields, fs...)
		}
	}
	if err := finish(); err != nil {
		return nil, err
	}
	for _, h := range sp.allHdrs {
		if h.v1 == "" {
			continue
		}
		v1 := sp.byName[h.v1]
		if v1 == nil {
			return nil, fmt.Errorf("line %d: header %s: unknown v1 header %s", h.line, h.goName, h.v1)
		}
		if _, err := v1Pairs(h, v1); err != nil {
			return nil, fmt.Errorf("line %d: header %s: %w", h.line, h.goName, err)
		}
	}
	return sp.files, nil
}

func parseField(fields []string, doc string) (field, error) {
	if len(fields) < 2 {
		return field{}, fmt.Errorf("want `key[=GoName] type [req] [default=V] [v1=GoName]`")
	}
	f := field{doc: doc}
	f.key, f.goName, _ = strings.Cut(fields[0], "=")
	if f.goName == "" {
		f.goName = goFieldName(f.key)
	}
	f.typ = fields[1]
	if !goTypes[f.typ] {
		return field{}, fmt.Errorf("field %s: unknown type %q", f.key, f.typ)
	}
	for _, attr := range fields[2:] {
		k, v, _ := strings.Cut(attr, "=")
		switch k {
		case "req":
			f.req = true
		case "default":
			lit, err := defaultLiteral(f.typ, v)
			if err != nil {
				return field{}, fmt.Errorf("field %s: %w", f.key, err)
			}
			f.def = lit
		case "v1":
			f.v1 = v
		case "res":
			if !resourceTypes[v] {
				return field{}, fmt.Errorf("field %s: unknown resource type %q", f.key, v)
			}
			f.res = v
		case "split":
			f.split = v
		case "has":
			f.has = true
		default:
			return field{}, fmt.Errorf("field %s: unknown attribute %q", f.key, attr)
		}
	}
	if f.req && f.def != "" {
		return field{}, fmt.Errorf("field %s: a required field has no default", f.key)
	}
	return f, nil
}

func defaultLiteral(typ, v string) (string, error) {
	switch typ {
	case "string":
		return strconv.Quote(v), nil
	case "bool":
		if v != "true" && v != "false" {
			return "", fmt.Errorf("bad bool default %q", v)
		}
		if v == "false" {
			return "", nil
		}
		return v, nil
	default:
		bits := 32
		if typ == "int64" {
			bits = 64
		}
		n, err := strconv.ParseInt(v, 10, bits)
		if err != nil {
			return "", fmt.Errorf("bad %s default %q", typ, v)
		}
		if n == 0 {
			return "", nil
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// goFieldName upper-cases the first letter and spells a trailing "Id" as
// "ID": queueId → QueueID, clientID → ClientID.
func goFieldName(key string) string {
	n := strings.ToUpper(key[:1]) + key[1:]
	if strings.HasSuffix(n, "Id") {
		n = n[:len(n)-2] + "ID"
	}
	return n
}

// v1Pairs maps each field of h to its counterpart in v1 (Go names).
func v1Pairs(h, v1 *header) ([][2]field, error) {
	byGo := map[string]field{}
	for _, f := range v1.fields {
		byGo[f.goName] = f
	}
	claimed := map[string]bool{}
	for _, f := range h.fields {
		if f.v1 != "" {
			claimed[f.v1] = true
		}
	}
	var pairs [][2]field
	for _, f := range h.fields {
		target := f.v1
		if target == "" {
			if claimed[f.goName] {
				continue // the V1 field is fed by another field
			}
			target = f.goName
		}
		g, ok := byGo[target]
		if !ok {
			if f.v1 != "" {
				return nil, fmt.Errorf("field %s: no V1 field %s", f.key, f.v1)
			}
			continue
		}
		if g.typ != f.typ {
			return nil, fmt.Errorf("field %s: type %s differs from V1 %s", f.key, f.typ, g.typ)
		}
		pairs = append(pairs, [2]field{f, g})
	}
	return pairs, nil
}

func (f field) zero() string {
	if f.def != "" {
		return f.def
	}
	switch f.typ {
	case "string":
		return `""`
	case "bool":
		return "false"
	}
	return "0"
}

// presenceBits numbers h's has fields (Go name → bit of h.present).
func presenceBits(h *header) map[string]int {
	bits := map[string]int{}
	for _, f := range h.fields {
		if f.has {
			bits[f.goName] = len(bits)
		}
	}
	return bits
}

func renderHeaderFile(hf *headerFile, all map[string]*header) []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by codec/internal/gen from codec/internal/spec/headers.def. DO NOT EDIT.\n\n")
	b.WriteString("package header\n\n")
	b.WriteString("import \"github.com/rocketgo/rocketgo/codec\"\n\n")
	for _, h := range hf.headers {
		renderHeader(&b, h)
		if h.v1 != "" {
			renderV1(&b, h, all[h.v1])
		}
	}
	return b.Bytes()
}

func renderHeader(b *bytes.Buffer, h *header) {
	name := h.goName
	if h.java == "-" {
		fmt.Fprintf(b, "// %s is not a Java class; it types extFields the Java side sets by hand.\n", name)
	} else {
		fmt.Fprintf(b, "// %s is the Java %s.\n", name, h.java)
	}
	if len(h.requests) > 0 {
		fmt.Fprintf(b, "// Carried by requests %s.\n", strings.Join(h.requests, ", "))
	}
	if len(h.replies) > 0 {
		fmt.Fprintf(b, "// Carried by responses to %s.\n", strings.Join(h.replies, ", "))
	}
	if len(h.doc) > 0 {
		b.WriteString("//\n")
		for _, d := range h.doc {
			fmt.Fprintf(b, "// %s\n", d)
		}
	}
	fmt.Fprintf(b, "type %s struct {\n", name)
	for _, f := range h.fields {
		c := f.key
		if f.req {
			c += ", required"
		}
		if f.def != "" {
			c += ", default " + f.def
		}
		if f.doc != "" {
			c += ": " + f.doc
		}
		fmt.Fprintf(b, "\t%s %s // %s\n", f.goName, f.typ, c)
	}
	bits := presenceBits(h)
	if len(bits) > 0 {
		b.WriteString("\n\tpresent uint64 // the has fields Decode saw with a value\n")
	}
	b.WriteString("}\n\n")
	for _, f := range h.fields {
		if f.has {
			fmt.Fprintf(b, "// Has%s reports whether the decoded request carried %s with a value.\n", f.goName, f.key)
			fmt.Fprintf(b, "func (h *%s) Has%s() bool { return h.present&(uint64(1)<<%d) != 0 }\n\n", name, f.goName, bits[f.goName])
			fmt.Fprintf(b, "// Set%s sets %s and marks it present, so Encode writes it even at its default.\n", f.goName, f.key)
			fmt.Fprintf(b, "func (h *%s) Set%s(v %s) { h.%s = v; h.present |= uint64(1) << %d }\n\n", name, f.goName, f.typ, f.goName, bits[f.goName])
		}
	}

	// Decode.
	var reqs []field
	for _, f := range h.fields {
		if f.req {
			reqs = append(reqs, f)
		}
	}
	fmt.Fprintf(b, "// Decode fills h from f.Ext; strings alias the frame.\n")
	fmt.Fprintf(b, "func (h *%s) Decode(f *codec.Frame) error {\n", name)
	fmt.Fprintf(b, "\t*h = %s{", name)
	first := true
	for _, f := range h.fields {
		if f.def != "" {
			if !first {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%s: %s", f.goName, f.def)
			first = false
		}
	}
	b.WriteString("}\n")
	if len(h.fields) == 0 {
		b.WriteString("\treturn nil\n}\n\n")
	} else {
		if len(reqs) > 0 {
			b.WriteString("\tvar seen uint64\n")
		}
		b.WriteString("\tfor i := range f.Ext {\n\t\tkv := &f.Ext[i]\n\t\tswitch kv.Key {\n")
		ri := 0
		for _, f := range h.fields {
			fmt.Fprintf(b, "\t\tcase %q:\n", f.key)
			bit := ""
			if f.req {
				bit = fmt.Sprintf("uint64(1) << %d", ri)
				ri++
			}
			switch f.typ {
			case "string":
				fmt.Fprintf(b, "\t\t\th.%s = kv.Value\n", f.goName)
				if f.def != "" {
					fmt.Fprintf(b, "\t\t\tif kv.Value == \"\" {\n\t\t\t\th.%s = %s\n\t\t\t}\n", f.goName, f.def)
				}
			case "bool":
				fmt.Fprintf(b, "\t\t\th.%s = parseBool(kv.Value, %s)\n", f.goName, f.zero())
			case "int32", "int64":
				fn := "parseInt32"
				if f.typ == "int64" {
					fn = "parseInt64"
				}
				fmt.Fprintf(b, "\t\t\tv, err := %s(%q, kv, %s)\n\t\t\tif err != nil {\n\t\t\t\treturn err\n\t\t\t}\n", fn, name, f.zero())
				fmt.Fprintf(b, "\t\t\th.%s = v\n", f.goName)
			}
			if bit != "" {
				fmt.Fprintf(b, "\t\t\tseen = mark(seen, %s, kv.Value)\n", bit)
			}
			if f.has {
				fmt.Fprintf(b, "\t\t\th.present = mark(h.present, uint64(1)<<%d, kv.Value)\n", bits[f.goName])
			}
		}
		b.WriteString("\t\t}\n\t}\n")
		if len(reqs) > 0 {
			fmt.Fprintf(b, "\tif seen != %#x {\n", uint64(1)<<len(reqs)-1)
			for i, f := range reqs {
				fmt.Fprintf(b, "\t\tif seen&(uint64(1)<<%d) == 0 {\n\t\t\treturn missingField(%q, %q)\n\t\t}\n", i, name, f.key)
			}
			b.WriteString("\t}\n")
		}
		b.WriteString("\treturn nil\n}\n\n")
	}

	// Encode / AppendExt.
	fmt.Fprintf(b, "// Encode appends h's extFields to f.Ext (see AppendExt).\n")
	fmt.Fprintf(b, "func (h *%s) Encode(f *codec.Frame) { h.AppendExt(f, nil) }\n\n", name)
	fmt.Fprintf(b, "// AppendExt appends h's extFields to f.Ext, formatting numbers into\n// scratch, which the new values alias; it returns the extended scratch.\n// Required fields are always written (strings unless empty), optional\n// fields only when they differ from their default.\n")
	fmt.Fprintf(b, "func (h *%s) AppendExt(f *codec.Frame, scratch []byte) []byte {\n", name)
	for _, f := range h.fields {
		cond := ""
		switch {
		case f.typ == "string":
			cond = fmt.Sprintf("h.%s != %s", f.goName, f.zero())
			if f.req {
				cond = fmt.Sprintf("h.%s != \"\"", f.goName)
			}
		case !f.req && f.typ == "bool" && f.zero() == "true":
			cond = "!h." + f.goName
		case !f.req && f.typ == "bool":
			cond = "h." + f.goName
		case !f.req:
			cond = fmt.Sprintf("h.%s != %s", f.goName, f.zero())
		}
		if f.has && cond != "" {
			cond += fmt.Sprintf(" || h.present&(uint64(1)<<%d) != 0", bits[f.goName])
		}
		ind := "\t"
		if cond != "" {
			fmt.Fprintf(b, "\tif %s {\n", cond)
			ind = "\t\t"
		}
		switch f.typ {
		case "string":
			fmt.Fprintf(b, "%sf.Ext = append(f.Ext, codec.KV{Key: %q, Value: h.%s})\n", ind, f.key, f.goName)
		case "bool":
			fmt.Fprintf(b, "%sf.Ext = append(f.Ext, codec.KV{Key: %q, Value: formatBool(h.%s)})\n", ind, f.key, f.goName)
		case "int32", "int64":
			fmt.Fprintf(b, "%sscratch = appendInt(f, %q, int64(h.%s), scratch)\n", ind, f.key, f.goName)
		}
		if cond != "" {
			b.WriteString("\t}\n")
		}
	}
	b.WriteString("\treturn scratch\n}\n\n")
}

func renderV1(b *bytes.Buffer, h, v1 *header) {
	pairs, _ := v1Pairs(h, v1) // validated by parseHeaders
	fmt.Fprintf(b, "// ToV1 converts h to the long-key form, as the Java broker does first.\n")
	fmt.Fprintf(b, "func (h *%s) ToV1(v *%s) {\n\t*v = %s{\n", h.goName, v1.goName, v1.goName)
	for _, p := range pairs {
		fmt.Fprintf(b, "\t\t%s: h.%s,\n", p[1].goName, p[0].goName)
	}
	b.WriteString("\t}\n")
	renderPresence(b, pairs, "h", presenceBits(h), 0, "v", presenceBits(v1), 1)
	b.WriteString("}\n\n")
	fmt.Fprintf(b, "// FromV1 fills h from the long-key form.\n")
	fmt.Fprintf(b, "func (h *%s) FromV1(v *%s) {\n\t*h = %s{\n", h.goName, v1.goName, h.goName)
	for _, p := range pairs {
		fmt.Fprintf(b, "\t\t%s: v.%s,\n", p[0].goName, p[1].goName)
	}
	b.WriteString("\t}\n")
	renderPresence(b, pairs, "v", presenceBits(v1), 1, "h", presenceBits(h), 0)
	b.WriteString("}\n\n")
}

// renderPresence carries the presence of paired has fields from src to
// dst in a ToV1 / FromV1 (si, di: which side of a pair is whose field).
func renderPresence(b *bytes.Buffer, pairs [][2]field, src string, srcBits map[string]int, si int, dst string, dstBits map[string]int, di int) {
	for _, p := range pairs {
		sb, ok1 := srcBits[p[si].goName]
		db, ok2 := dstBits[p[di].goName]
		if ok1 && ok2 {
			fmt.Fprintf(b, "\tif %s.present&(uint64(1)<<%d) != 0 {\n\t\t%s.present |= uint64(1) << %d\n\t}\n", src, sb, dst, db)
		}
	}
}

// renderRegistry writes the code → header lookup and the list of every
// header type (used by tests, fuzzing and tools).
func renderRegistry(files []*headerFile, codes []code) ([]byte, error) {
	known := map[string]bool{}
	for _, c := range codes {
		if c.kind == "request" {
			known[c.name] = true
		}
	}
	var all []*header
	for _, f := range files {
		all = append(all, f.headers...)
	}
	reqOf, respOf := map[string]string{}, map[string]string{}
	for _, h := range all {
		for _, c := range h.requests {
			if !known[c] {
				return nil, fmt.Errorf("header %s: unknown request code %s", h.goName, c)
			}
			if prev, ok := reqOf[c]; ok {
				return nil, fmt.Errorf("request %s has two headers: %s and %s", c, prev, h.goName)
			}
			reqOf[c] = h.goName
		}
		for _, c := range h.replies {
			if !known[c] {
				return nil, fmt.Errorf("header %s: unknown request code %s", h.goName, c)
			}
			if prev, ok := respOf[c]; ok {
				return nil, fmt.Errorf("response to %s has two headers: %s and %s", c, prev, h.goName)
			}
			respOf[c] = h.goName
		}
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by codec/internal/gen from codec/internal/spec/headers.def. DO NOT EDIT.\n\n")
	b.WriteString("package header\n\nimport \"github.com/rocketgo/rocketgo/codec\"\n\n")
	writeLookup := func(fn, doc string, m map[string]string) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(doc)
		fmt.Fprintf(&b, "func %s(c codec.RequestCode) Header {\n\tswitch c {\n", fn)
		for _, k := range keys {
			fmt.Fprintf(&b, "\tcase codec.Req%s:\n\t\treturn new(%s)\n", camel(k), m[k])
		}
		b.WriteString("\t}\n\treturn nil\n}\n\n")
	}
	writeLookup("ForRequest", "// ForRequest returns a new header of the type the request with code c\n// carries, or nil when the spec assigns none.\n", reqOf)
	writeLookup("ForResponse", "// ForResponse returns a new header of the type the response to the\n// request with code c carries, or nil when the spec assigns none.\n", respOf)
	renderAuthz(&b, all)
	b.WriteString("// All returns a new value of every generated header type, keyed by Go name.\nfunc All() map[string]Header {\n\treturn map[string]Header{\n")
	names := make([]string, 0, len(all))
	for _, h := range all {
		names = append(names, h.goName)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\t\t%q: new(%s),\n", n, n)
	}
	b.WriteString("\t}\n}\n")
	return b.Bytes(), nil
}

// renderAuthz writes AuthzOf: each annotated request header's action,
// resource type and resource fields, per request code.
func renderAuthz(b *bytes.Buffer, all []*header) {
	type entry struct {
		code string
		h    *header
	}
	var es []entry
	for _, h := range all {
		if h.actions == nil {
			continue
		}
		for _, c := range h.requests {
			es = append(es, entry{c, h})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].code < es[j].code })
	for _, h := range all {
		if h.actions == nil {
			continue
		}
		var fs []field
		for _, f := range h.fields {
			if f.res != "" {
				fs = append(fs, f)
			}
		}
		fmt.Fprintf(b, "var authz%s = Authz{Actions: ", h.goName)
		for i, a := range h.actions {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString("Action" + a)
		}
		res := h.resource
		if res == "" {
			res = "Unknown"
		}
		fmt.Fprintf(b, ", Resource: Resource%s", res)
		if len(fs) > 0 {
			b.WriteString(", Fields: []ResourceField{")
			for i, f := range fs {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(b, "{Key: %q, Type: Resource%s", f.key, f.res)
				if f.split != "" {
					fmt.Fprintf(b, ", Split: %q", f.split)
				}
				b.WriteString("}")
			}
			b.WriteString("}")
		}
		b.WriteString("}\n")
	}
	b.WriteString("\n// AuthzOf returns the authorization facts of the header the request with\n// code c carries (Java's @RocketMQAction and @RocketMQResource on its\n// class), or false when that header is not annotated or there is none.\n")
	b.WriteString("func AuthzOf(c codec.RequestCode) (*Authz, bool) {\n\tswitch c {\n")
	for _, e := range es {
		fmt.Fprintf(b, "\tcase codec.Req%s:\n\t\treturn &authz%s, true\n", camel(e.code), e.h.goName)
	}
	b.WriteString("\t}\n\treturn nil, false\n}\n\n")
}
