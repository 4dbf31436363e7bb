// Package docs holds the checks that keep minicp's written design true: the
// import rules of ARCHITECTURE.md hold in the package graph, and the files
// and identifiers that package docs and ARCHITECTURE.md name exist.
package docs

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath string
	Dir        string
	Imports    []string
	Deps       []string
}

// listPackages lists every package of the module, with its direct imports
// and its whole dependency closure, as the toolchain computes them.
func listPackages(t *testing.T) map[string]listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// importRule is one row of ARCHITECTURE.md's import rules: the packages
// matched by Packages must not import (directly) any of MustNotImport, and
// must not depend on (directly or not) any of MustNotDependOn.
type importRule struct {
	Packages        string
	MustNotImport   []string
	MustNotDependOn []string
	line            int
}

// readImportRules parses the table under the "## Import rules" heading.
func readImportRules(t *testing.T) []importRule {
	t.Helper()
	f, err := os.Open("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rules []importRule
	inSection := false
	scanner := bufio.NewScanner(f)
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = strings.HasPrefix(line, "## Import rules")
			continue
		}
		if !inSection || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("ARCHITECTURE.md:%d: an import rule has three cells, got %d", n, len(cells))
		}
		rules = append(rules, importRule{
			Packages:        strings.Trim(strings.TrimSpace(cells[0]), "`"),
			MustNotImport:   backticked(cells[1]),
			MustNotDependOn: backticked(cells[2]),
			line:            n,
		})
	}
	if len(rules) == 0 {
		t.Fatal("ARCHITECTURE.md has no import rules under '## Import rules'")
	}
	return rules
}

var backtickedRE = regexp.MustCompile("`([^`]+)`")

func backticked(cell string) []string {
	var out []string
	for _, m := range backtickedRE.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// matches reports whether importPath is named by pattern, where a trailing
// "/..." names a package and everything below it, as in `go list`.
func matches(pattern, importPath string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return importPath == base || strings.HasPrefix(importPath, base+"/")
	}
	return importPath == pattern
}

func TestImportRulesOfArchitectureHold(t *testing.T) {
	pkgs := listPackages(t)
	for _, rule := range readImportRules(t) {
		matched := 0
		for path, p := range pkgs {
			if !matches(rule.Packages, path) {
				continue
			}
			matched++
			check := func(list []string, forbidden []string, verb string) {
				for _, dep := range list {
					for _, f := range forbidden {
						if dep != path && matches(f, dep) {
							t.Errorf("ARCHITECTURE.md:%d: %s %s %s, which the rule forbids (%s)", rule.line, path, verb, dep, f)
						}
					}
				}
			}
			check(p.Imports, rule.MustNotImport, "imports")
			check(p.Deps, rule.MustNotDependOn, "depends on")
		}
		if matched == 0 {
			t.Errorf("ARCHITECTURE.md:%d: the rule names %s, which is no package of the module", rule.line, rule.Packages)
		}
	}
}

// fileRefRE finds file names a text refers to: "registry/resource.go",
// "watch.go", "docs/labs/05-node-lease.md".
var fileRefRE = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:[\w.-]+/)*[a-zA-Z0-9][\w-]*\.(?:go|md))\b`)

// qualifiedRE finds package-qualified identifiers: "registry.Table",
// "watchcache.New", "registry.Table.Change".
var qualifiedRE = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// declarations returns the package-level names (and "Type.Method" for
// methods) declared in the non-test files of dir.
func declarations(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	names := map[string]bool{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names[d.Name.Name] = true
					continue
				}
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if idx, ok := recv.(*ast.IndexExpr); ok {
					recv = idx.X
				}
				if id, ok := recv.(*ast.Ident); ok {
					names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
						if it, ok := s.Type.(*ast.InterfaceType); ok {
							for _, m := range it.Methods.List {
								for _, n := range m.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// documentedTexts returns the comments of every Go file of the module,
// tests included, and ARCHITECTURE.md, keyed by file name: relative file
// names in them are read from the file's directory.
func documentedTexts(t *testing.T, pkgs map[string]listedPackage) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for _, p := range pkgs {
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			name := filepath.Join(p.Dir, e.Name())
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, c := range f.Comments {
				b.WriteString(c.Text())
				b.WriteString("\n")
			}
			texts[name] = b.String()
		}
	}
	arch, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	texts["ARCHITECTURE.md"] = string(arch)
	return texts
}

func TestFilesAndIdentifiersNamedInDocsExist(t *testing.T) {
	pkgs := listPackages(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// Package names to their directories; a name two packages share
	// ("crd": crd and controllers/crd) is checked against both.
	dirsByName := map[string][]string{}
	for path, p := range pkgs {
		name := path[strings.LastIndex(path, "/")+1:]
		dirsByName[name] = append(dirsByName[name], p.Dir)
	}
	decls := map[string]map[string]bool{}
	declared := func(dir, name string) bool {
		if decls[dir] == nil {
			decls[dir] = declarations(t, dir)
		}
		return decls[dir][name]
	}

	texts := documentedTexts(t, pkgs)
	files := make([]string, 0, len(texts))
	for f := range texts {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, file := range files {
		text := texts[file]
		dir := filepath.Dir(file)
		if file == "ARCHITECTURE.md" {
			dir = "."
		}
		for _, m := range fileRefRE.FindAllStringSubmatch(text, -1) {
			ref := m[1]
			if !fileExists(ref, dir, root) {
				t.Errorf("%s names %s, which does not exist", rel(root, file), ref)
			}
		}
		for _, m := range qualifiedRE.FindAllStringSubmatch(text, -1) {
			dirs, ok := dirsByName[m[1]]
			if !ok {
				continue // not a minicp package: metav1.Status, http.Handler
			}
			found := false
			for _, d := range dirs {
				if declared(d, m[2]) && (m[3] == "" || declared(d, m[2]+"."+m[3]) || !isExported(m[3])) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s names %s, which package %s does not declare", rel(root, file), m[0], m[1])
			}
		}
	}
}

func isExported(name string) bool { return name != "" && strings.ToUpper(name[:1]) == name[:1] }

// fileExists looks for a referenced file beside the text, from the module
// root, and, for a bare name, anywhere in the module.
func fileExists(ref, dir, root string) bool {
	for _, base := range []string{dir, root, filepath.Join(root, "docs"), filepath.Join(root, "docs", "labs")} {
		if _, err := os.Stat(filepath.Join(base, ref)); err == nil {
			return true
		}
	}
	if strings.Contains(ref, "/") {
		return false
	}
	found := false
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == ref {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}
