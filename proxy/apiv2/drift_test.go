package apiv2

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// protoJar is the rocketmq-proto version this package is written after; the
// client-5 profile of conformance/java/pom.xml carries the same version.
const protoJar = "rocketmq-proto-2.1.1.jar"

// TestDriftAgainstJar compares our descriptors with those compiled into
// Apache's rocketmq-proto jar: every file, message, field (number, type,
// label, type name, oneof, proto3 optional), enum value, rpc (types,
// streaming) and option except go_package. The jar's side is the output of
// conformance/java/.../ProtoDump.java in the file ROCKETGO_PROTO_DUMP names;
// conformance's TestProtoDrift builds and runs it, then runs this test. Skips
// when the variable is unset.
func TestDriftAgainstJar(t *testing.T) {
	path := os.Getenv("ROCKETGO_PROTO_DUMP")
	if path == "" {
		t.Skip("ROCKETGO_PROTO_DUMP not set (run by conformance TestProtoDrift)")
	}
	jar, jarPath, err := readProtoDump(path)
	require.NoError(t, err)
	require.Truef(t, strings.HasSuffix(jarPath, "/"+protoJar),
		"ProtoDump loaded %s, want %s (a stale conformance/java/target/client-5/lib? make -C conformance clean)", jarPath, protoJar)
	require.NotEmpty(t, jar)

	ours := map[string]*descriptorpb.FileDescriptorProto{}
	for name := range jar {
		if fd, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
			ours[name] = protodesc.ToFileDescriptorProto(fd)
		} // else: reported as missing below
	}
	protoregistry.GlobalFiles.RangeFilesByPackage("apache.rocketmq.v2", func(fd protoreflect.FileDescriptor) bool {
		ours[fd.Path()] = protodesc.ToFileDescriptorProto(fd)
		return true
	})
	if diff := descriptorDiff(jar, ours); len(diff) > 0 {
		t.Fatalf("proxy/apiv2 differs from %s in %d places (- jar only, + ours only, ~ differs):\n%s",
			protoJar, len(diff), strings.Join(diff, "\n"))
	}
	t.Logf("proxy/apiv2 matches %s: %d files, %d descriptor elements", protoJar, len(ours), len(normalize(ours)))
}

// readProtoDump parses ProtoDump's lines: "JAR <url>" and
// "FILE <name> <base64 FileDescriptorProto>".
func readProtoDump(path string) (map[string]*descriptorpb.FileDescriptorProto, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	files := map[string]*descriptorpb.FileDescriptorProto{}
	var jar string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "JAR":
			jar = rest
		case "FILE":
			name, b64, _ := strings.Cut(rest, " ")
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, "", fmt.Errorf("ProtoDump line for %s: %w", name, err)
			}
			fd := &descriptorpb.FileDescriptorProto{}
			if err := proto.Unmarshal(raw, fd); err != nil {
				return nil, "", fmt.Errorf("ProtoDump line for %s: %w", name, err)
			}
			files[name] = fd
		}
	}
	return files, jar, sc.Err()
}

// TestDriftDetects makes sure the comparison sees the kinds of drift it is
// there for, on a damaged copy of our own descriptors (no Java needed).
func TestDriftDetects(t *testing.T) {
	fd, err := protoregistry.GlobalFiles.FindFileByPath("apache/rocketmq/v2/service.proto")
	require.NoError(t, err)
	ours := map[string]*descriptorpb.FileDescriptorProto{fd.Path(): protodesc.ToFileDescriptorProto(fd)}
	require.Empty(t, descriptorDiff(ours, ours))

	bad := proto.Clone(ours[fd.Path()]).(*descriptorpb.FileDescriptorProto)
	for _, m := range bad.MessageType {
		switch m.GetName() {
		case "SendResultEntry":
			m.Field[1].Number = proto.Int32(9) // message_id 2 -> 9
		case "AckMessageEntry":
			m.Field = m.Field[:len(m.Field)-1] // drop lite_topic
		case "SendMessageRequest":
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{Name: proto.String("extra"), Number: proto.Int32(2),
				Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()})
		}
	}
	for _, s := range bad.Service {
		for _, rpc := range s.Method {
			if rpc.GetName() == "ReceiveMessage" {
				rpc.ServerStreaming = proto.Bool(false)
			}
		}
	}
	diff := strings.Join(descriptorDiff(ours, map[string]*descriptorpb.FileDescriptorProto{fd.Path(): bad}), "\n")
	require.Contains(t, diff, "~ field apache.rocketmq.v2.SendResultEntry.message_id")
	require.Contains(t, diff, "- field apache.rocketmq.v2.AckMessageEntry.lite_topic")
	require.Contains(t, diff, "+ field apache.rocketmq.v2.SendMessageRequest.extra")
	require.Contains(t, diff, "~ rpc apache.rocketmq.v2.MessagingService.ReceiveMessage")
}

// descriptorDiff lists what differs between the jar's files and ours, one
// line per descriptor element: "- " only in the jar, "+ " only in ours,
// "~ " in both but different (jar value, then ours).
func descriptorDiff(jar, ours map[string]*descriptorpb.FileDescriptorProto) []string {
	a, b := normalize(jar), normalize(ours)
	var out []string
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			out = append(out, "- "+k+" "+v)
		case v != w:
			out = append(out, "~ "+k+"\n    jar:  "+v+"\n    ours: "+w)
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "+ "+k+" "+w)
		}
	}
	sort.Strings(out)
	return out
}

// normalize flattens files into element -> attributes, e.g.
//
//	"field apache.rocketmq.v2.Message.body" -> "number=4 type=TYPE_BYTES label=LABEL_OPTIONAL"
//
// Declaration order is not part of the wire and is left out; go_package is
// ours alone, and comments are not in either descriptor.
func normalize(files map[string]*descriptorpb.FileDescriptorProto) map[string]string {
	out := map[string]string{}
	for name, f := range files {
		deps := append([]string(nil), f.Dependency...)
		sort.Strings(deps)
		out["file "+name] = fmt.Sprintf("package=%s syntax=%s deps=%s public=%v weak=%v options{%s}",
			f.GetPackage(), f.GetSyntax(), strings.Join(deps, ","), f.PublicDependency, f.WeakDependency, options(f.Options))
		scope := f.GetPackage()
		for _, m := range f.MessageType {
			normalizeMessage(out, scope, m)
		}
		for _, e := range f.EnumType {
			normalizeEnum(out, scope, e)
		}
		for _, s := range f.Service {
			full := scope + "." + s.GetName()
			out["service "+full] = "file=" + name + " options{" + options(s.Options) + "}"
			for _, m := range s.Method {
				out["rpc "+full+"."+m.GetName()] = fmt.Sprintf("input=%s output=%s client_streaming=%v server_streaming=%v options{%s}",
					m.GetInputType(), m.GetOutputType(), m.GetClientStreaming(), m.GetServerStreaming(), options(m.Options))
			}
		}
		for _, x := range f.Extension {
			out["extension "+scope+"."+x.GetName()] = fieldAttrs(nil, x)
		}
	}
	return out
}

func normalizeMessage(out map[string]string, scope string, m *descriptorpb.DescriptorProto) {
	full := scope + "." + m.GetName()
	var oneofs []string
	for _, o := range m.OneofDecl {
		oneofs = append(oneofs, o.GetName()+"{"+options(o.Options)+"}")
	}
	var reserved []string
	for _, r := range m.ReservedRange {
		reserved = append(reserved, fmt.Sprintf("%d-%d", r.GetStart(), r.GetEnd()))
	}
	var extRanges []string
	for _, r := range m.ExtensionRange {
		extRanges = append(extRanges, fmt.Sprintf("%d-%d", r.GetStart(), r.GetEnd()))
	}
	out["message "+full] = fmt.Sprintf("oneofs=%s reserved=%s reserved_names=%s extension_ranges=%s options{%s}",
		strings.Join(oneofs, ","), strings.Join(reserved, ","), strings.Join(m.ReservedName, ","),
		strings.Join(extRanges, ","), options(m.Options))
	for _, fld := range m.Field {
		out["field "+full+"."+fld.GetName()] = fieldAttrs(m, fld)
	}
	for _, x := range m.Extension {
		out["extension "+full+"."+x.GetName()] = fieldAttrs(m, x)
	}
	for _, n := range m.NestedType {
		normalizeMessage(out, full, n)
	}
	for _, e := range m.EnumType {
		normalizeEnum(out, full, e)
	}
}

func fieldAttrs(m *descriptorpb.DescriptorProto, f *descriptorpb.FieldDescriptorProto) string {
	oneof := "-"
	if f.OneofIndex != nil && m != nil && int(f.GetOneofIndex()) < len(m.OneofDecl) {
		oneof = m.OneofDecl[f.GetOneofIndex()].GetName()
	}
	s := fmt.Sprintf("number=%d type=%s label=%s type_name=%s oneof=%s proto3_optional=%v",
		f.GetNumber(), f.GetType(), f.GetLabel(), f.GetTypeName(), oneof, f.GetProto3Optional())
	if f.Extendee != nil {
		s += " extendee=" + f.GetExtendee()
	}
	if f.DefaultValue != nil {
		s += " default=" + f.GetDefaultValue()
	}
	return s + " options{" + options(f.Options) + "}"
}

func normalizeEnum(out map[string]string, scope string, e *descriptorpb.EnumDescriptorProto) {
	full := scope + "." + e.GetName()
	var reserved []string
	for _, r := range e.ReservedRange {
		reserved = append(reserved, fmt.Sprintf("%d-%d", r.GetStart(), r.GetEnd()))
	}
	out["enum "+full] = fmt.Sprintf("values=%d reserved=%s reserved_names=%s options{%s}",
		len(e.Value), strings.Join(reserved, ","), strings.Join(e.ReservedName, ","), options(e.Options))
	for _, v := range e.Value {
		// Enum values live in the enclosing scope, as protoc resolves them.
		out["enumvalue "+full+"."+v.GetName()] = fmt.Sprintf("number=%d options{%s}", v.GetNumber(), options(v.Options))
	}
}

// options renders the set fields of an options message in field-number
// order, go_package left out (the jar has none; ours names this module).
// Unknown fields (custom options neither side registers) are compared as
// raw bytes.
func options(m proto.Message) string {
	if m == nil {
		return ""
	}
	r := m.ProtoReflect()
	if !r.IsValid() {
		return ""
	}
	type kv struct {
		n int
		s string
	}
	var kvs []kv
	r.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() == "go_package" {
			return true
		}
		kvs = append(kvs, kv{int(fd.Number()), fmt.Sprintf("%s=%v", fd.Name(), v)})
		return true
	})
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].n < kvs[j].n })
	var parts []string
	for _, e := range kvs {
		parts = append(parts, e.s)
	}
	if u := r.GetUnknown(); len(u) > 0 {
		parts = append(parts, fmt.Sprintf("unknown=%x", []byte(u)))
	}
	return strings.Join(parts, " ")
}
