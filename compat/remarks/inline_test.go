package remarks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// inlineDirs are the packages (with their subpackages) that build
// responses, relative to this directory.
var inlineDirs = []string{"../../broker", "../../namesrv", "../../controller", "../../codec/transport", "../../proxy/remoting"}

// remarkSinks maps a function called by name to the index of its remark
// argument. Besides these, any function or method of the scanned package
// with a string parameter named remark is a sink (the broker's errResp and
// pullErr, the transport's refuse, the name server's fail, the
// controller's result.fail …).
var remarkSinks = map[string]int{
	"NewResponse": 2, // codec.NewResponse(req, code, remark)
}

// TestNoInlineRemarks fails listing every place in inlineDirs (non-test,
// non-generated files) where a response remark is built from a string
// literal instead of coming from this package. It looks at:
//
//   - the remark argument of codec.NewResponse and of every function of
//     the package with a string parameter named remark (errResp, pullErr,
//     refuse, fail …), any Remark: field of a composite literal and any
//     x.Remark = … assignment (also of fields named …Remark / …remark
//     that keep one for later, like the pull processor's connFullRemark);
//
//   - a local variable passed there: every assignment to that name in the
//     same function (x := …, x = …, var x = …);
//
//   - a function of the same package called directly as the remark (or as
//     the value of such a local): its return statements, one level deep
//     (validateTopic, illegalRemark …); for a function returning
//     (ResponseCode, string) this is the string result.
//
//   - a package-level const or var of the same package named there
//     (remarkNotLeader, a format string …): its value.
//
// A string literal anywhere in one of those expressions (inside
// fmt.Sprintf, a concatenation …) counts, except inside a call into
// package remarks; "" is fine. Not followed: locals across functions
// (a remark passed up through a parameter not named remark, a field), and
// helpers more than one call deep.
func TestNoInlineRemarks(t *testing.T) {
	var found []string
	fset := token.NewFileSet()
	for _, root := range inlineDirs {
		pkgs := map[string][]*ast.File{}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			name := d.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasSuffix(name, "_gen.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if isGenerated(f) {
				return nil
			}
			dir := filepath.Dir(path)
			pkgs[dir] = append(pkgs[dir], f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, files := range pkgs {
			found = append(found, scanPackage(fset, files)...)
		}
	}
	sort.Strings(found)
	if len(found) > 0 {
		t.Errorf("%d response remarks built from string literals; move them to compat/remarks:\n%s", len(found), strings.Join(found, "\n"))
	}
}

func isGenerated(f *ast.File) bool {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "// Code generated ") && strings.HasSuffix(c.Text, " DO NOT EDIT.") {
				return true
			}
		}
	}
	return false
}

// scanPackage reports the inline remarks of one package's files.
func scanPackage(fset *token.FileSet, files []*ast.File) []string {
	funcs := map[string][]*ast.FuncDecl{} // by name: functions and methods
	sinks := map[string]int{}             // by name: remark argument
	globals := map[string]ast.Expr{}      // package-level const and var values
	for k, v := range remarkSinks {
		sinks[k] = v
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				funcs[d.Name.Name] = append(funcs[d.Name.Name], d)
				i := 0
				for _, p := range d.Type.Params.List {
					for _, n := range p.Names {
						if id, ok := p.Type.(*ast.Ident); ok && id.Name == "string" && n.Name == "remark" {
							sinks[d.Name.Name] = i
						}
						i++
					}
					if len(p.Names) == 0 {
						i++
					}
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					vs, ok := sp.(*ast.ValueSpec)
					if !ok {
						continue
					}
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							globals[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	// literal reports a literal in e or in a package-level value it names.
	literal := func(e ast.Expr) bool {
		if hasLiteral(e) {
			return true
		}
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if found || isRemarksCall(n) {
				return false
			}
			if id, ok := n.(*ast.Ident); ok && (id.Obj == nil || id.Obj.Kind == ast.Con) {
				if v, ok := globals[id.Name]; ok && hasLiteral(v) {
					found = true
				}
			}
			return true
		})
		return found
	}
	var out []string
	seen := map[token.Pos]bool{}
	report := func(at ast.Node, what string) {
		if seen[at.Pos()] {
			return
		}
		seen[at.Pos()] = true
		out = append(out, fset.Position(at.Pos()).String()+": "+what)
	}
	// helper reports the literal returns of a same-package function called
	// directly as a remark.
	helper := func(e ast.Expr, why string) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			if id, ok := fn.X.(*ast.Ident); ok && id.Name == "remarks" {
				return
			}
			name = fn.Sel.Name
		}
		for _, fd := range funcs[name] {
			idx, ok := remarkResult(fd)
			if !ok {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false
				}
				ret, ok := n.(*ast.ReturnStmt)
				if !ok || len(ret.Results) <= idx {
					return true
				}
				if literal(ret.Results[idx]) {
					report(ret, name+" returns a literal remark ("+why+")")
				}
				return true
			})
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			// values assigned to each local name in this function
			assigned := map[string][]ast.Expr{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.AssignStmt:
					for i, l := range x.Lhs {
						id, ok := l.(*ast.Ident)
						if !ok {
							continue
						}
						if len(x.Rhs) == len(x.Lhs) {
							assigned[id.Name] = append(assigned[id.Name], x.Rhs[i])
						} else if len(x.Rhs) == 1 {
							// code, remark := f(): the whole call
							assigned[id.Name] = append(assigned[id.Name], x.Rhs[0])
						}
					}
				case *ast.ValueSpec:
					for i, id := range x.Names {
						if i < len(x.Values) {
							assigned[id.Name] = append(assigned[id.Name], x.Values[i])
						} else if len(x.Values) == 1 {
							assigned[id.Name] = append(assigned[id.Name], x.Values[0])
						}
					}
				}
				return true
			})
			check := func(at ast.Node, e ast.Expr, what string) {
				if literal(e) {
					report(at, what)
				}
				helper(e, what)
				// locals flowing into the remark
				ast.Inspect(e, func(n ast.Node) bool {
					if isRemarksCall(n) {
						return false
					}
					id, ok := n.(*ast.Ident)
					if !ok || id.Obj == nil || id.Obj.Kind != ast.Var {
						return true
					}
					for _, v := range assigned[id.Name] {
						if literal(v) {
							report(v, "local "+id.Name+" passed to "+what)
						}
						helper(v, "local "+id.Name+" passed to "+what)
					}
					return true
				})
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					var name string
					switch fn := x.Fun.(type) {
					case *ast.Ident:
						name = fn.Name
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					}
					if i, ok := sinks[name]; ok && len(x.Args) > i {
						check(x, x.Args[i], name)
					}
				case *ast.KeyValueExpr:
					if id, ok := x.Key.(*ast.Ident); ok && isRemarkField(id.Name) {
						check(x, x.Value, id.Name+":")
					}
				case *ast.AssignStmt:
					for i, l := range x.Lhs {
						if sel, ok := l.(*ast.SelectorExpr); ok && isRemarkField(sel.Sel.Name) && i < len(x.Rhs) {
							check(x, x.Rhs[i], "."+sel.Sel.Name+" =")
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// remarkResult is the index of the remark among fd's results: the string
// after a ResponseCode, else the first result if it is a string; false
// when fd returns no such string (an error, a frame …).
func remarkResult(fd *ast.FuncDecl) (int, bool) {
	if fd.Type.Results == nil {
		return 0, false
	}
	var types []ast.Expr
	for _, fl := range fd.Type.Results.List {
		for range max(len(fl.Names), 1) {
			types = append(types, fl.Type)
		}
	}
	isString := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "string"
	}
	for i := 1; i < len(types); i++ {
		if isResponseCode(types[i-1]) && isString(types[i]) {
			return i, true
		}
	}
	return 0, isString(types[0])
}

// isRemarkField: Remark, and the fields that keep a remark for later
// (connFullRemark, remark …).
func isRemarkField(name string) bool { return strings.HasSuffix(strings.ToLower(name), "remark") }

func isResponseCode(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "ResponseCode"
}

func isRemarksCall(n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "remarks"
}

// hasLiteral reports a non-empty string literal in e outside calls into
// package remarks.
func hasLiteral(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if found || isRemarksCall(n) {
			return false
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && lit.Value != `""` && lit.Value != "``" {
			found = true
		}
		return true
	})
	return found
}

// TestNoInlineRemarksFinds runs the scan on a package with one inline
// remark of each kind it covers, and with the forms it must accept.
func TestNoInlineRemarksFinds(t *testing.T) {
	const src = `package p

const remarkOwn = "own"

func errResp(req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame { return nil }

func check(s string) string {
	if s == "" {
		return "blank"
	}
	return ""
}

func status() (codec.ResponseCode, string) { return 1, "status" }

func h(req *codec.Frame, n int) *codec.Frame {
	_ = codec.NewResponse(req, 1, "literal")                     // 1
	_ = errResp(req, 1, fmt.Sprintf("n=%d", n))                  // 2
	_ = &codec.Frame{Remark: "x" + req.Remark}                   // 3
	req.Remark = "set"                                           // 4
	remark := "local"                                            // 5
	if n > 1 {
		remark = fmt.Sprintf("again %d", n)                      // 6
	}
	_ = errResp(req, 1, remark)
	_ = errResp(req, 1, check(req.Remark))                       // 7 (in check)
	_, r := status()                                             // 8 (in status)
	_ = errResp(req, 1, r)
	_ = errResp(req, 1, remarkOwn)                               // 9
	_ = errResp(req, 1, remarks.TopicNotExist("T"))
	_ = codec.NewResponse(req, 0, "")
	_ = errResp(req, 1, err.Error())
	return nil
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := scanPackage(fset, []*ast.File{f})
	if len(found) != 9 {
		t.Fatalf("found %d, want 9:\n%s", len(found), strings.Join(found, "\n"))
	}
}
