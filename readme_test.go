package redisson_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestREADMEGoBlocksAreExamples checks that the Go code a newcomer reads runs: every ```go block of
// README.md and of docs/*.md is an excerpt of exactly one Example function of example_test.go, which go test
// compiles and runs (against a real redis-server) and whose output it checks.
//
// The rules, applied by readmeProblems:
//   - A block's non-empty lines, each with its indentation dropped and runs of white space made one
//     space, must appear in order and contiguously (blank lines aside) in the body of one Example
//     function. The block may leave out lines only at the start and the end of that body: the client
//     set-up before it, printing the outcome after it. A block found in no Example, or in two, fails,
//     naming the block's first line.
//   - The code is written as the body of a function that returns an error (return err), so the
//     Examples put it in a closure of theirs: func(ctx context.Context, ...) error.
//   - A block may start with an import declaration, which cannot be in a function body: every path
//     it imports must be imported by example_test.go, and the rest of the block is checked as above.
//   - A block whose import declaration imports an adapter module, github.com/goredisson/redisson/
//     contrib/X, is checked against that module's contrib/X/example_test.go (whose Examples its own
//     tests compile and run) instead.
//   - Only blocks fenced as ```go are checked: shell commands (```sh) and output (```text, or a
//     bare ```) are not Go.
func TestREADMEGoBlocksAreExamples(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string][]byte)
	contrib, err := filepath.Glob("contrib/*/example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append([]string{"example_test.go"}, contrib...) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.ToSlash(path)] = src
	}
	for _, path := range append([]string{"README.md"}, docs...) {
		md, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, problems := readmeProblemsIn(string(md), files)
		if blocks == 0 && path == "README.md" {
			t.Fatal("README.md has no ```go block: the check would pass vacuously")
		}
		for _, p := range problems {
			t.Error(filepath.ToSlash(path) + ":" + p)
		}
	}
}

// TestREADMECheckRejectsForeignCode checks the checker itself on a small README and example file:
// it accepts an excerpt and rejects each way a block can stop being an Example's code.
func TestREADMECheckRejectsForeignCode(t *testing.T) {
	const examples = `package p_test

import (
	"context"

	"example.com/lib"
)

func ExampleA() {
	c := lib.New()
	run := func(ctx context.Context) error {
		h, err := c.Lock(ctx) // waits
		if err != nil {
			return err
		}
		defer h.Unlock(ctx)
		return nil
	}
	_ = run(context.Background())
	// Output:
}

func ExampleB() {
	shared := 1
	_ = shared
}

func ExampleC() {
	shared := 1
	_ = shared
}
`
	cases := []struct {
		name  string
		block string
		want  string // "" for no problem, else a part of the problem
	}{
		{"excerpt", "h, err := c.Lock(ctx)   // waits\nif err != nil {\n\n    return err\n}\ndefer h.Unlock(ctx)", ""},
		{"imports then excerpt", "import (\n\t\"example.com/lib\"\n)\n\nc := lib.New()", ""},
		{"placeholder", "h, err := c.Lock(ctx) // waits\nif err != nil { ... }", `"h, err := c.Lock(ctx) // waits" is in no Example`},
		{"middle line left out", "h, err := c.Lock(ctx) // waits\ndefer h.Unlock(ctx)", "is in no Example"},
		{"reordered", "defer h.Unlock(ctx)\nh, err := c.Lock(ctx) // waits", "is in no Example"},
		{"changed comment", "h, err := c.Lock(ctx) // waits until acquired", "is in no Example"},
		{"in two examples", "shared := 1", "is in 2 Examples (ExampleB, ExampleC)"},
		{"foreign import", "import \"example.com/other\"\n\nc := lib.New()", `imports "example.com/other"`},
		{"broken import", "import (\n\t\"example.com/lib\"\n\nc := lib.New()", "import declaration"},
		{"empty", "\n", "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			md := "# lib\n\nSome text.\n\n```go\n" + tc.block + "\n```\n\n```sh\nnot go\n```\n"
			n, problems := readmeProblems(md, []byte(examples))
			if n != 1 {
				t.Fatalf("found %d go blocks, want 1", n)
			}
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("problems %q, want none", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)):
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
}

// readmeProblems applies the rules of TestREADMEGoBlocksAreExamples to the markdown md and the
// example file src: it returns the number of ```go blocks and one problem per failing block, each
// starting with the line number in md of the block's first line.
func readmeProblems(md string, src []byte) (blocks int, problems []string) {
	return readmeProblemsIn(md, map[string][]byte{"example_test.go": src})
}

// contribImport matches an import of an adapter module of contrib/ (a module of its own, whose
// Examples are in its own example_test.go).
var contribImport = regexp.MustCompile(`"github\.com/goredisson/redisson/(contrib/[a-z0-9_]+)"`)

// readmeProblemsIn is readmeProblems over several example files, by path: a block whose import
// declaration imports a contrib module, contrib/X, is checked against files["contrib/X/example_test.go"],
// every other block against files["example_test.go"].
func readmeProblemsIn(md string, files map[string][]byte) (blocks int, problems []string) {
	type parsed struct {
		bodies  map[string][]string
		imports []string
		names   []string
	}
	examples := make(map[string]parsed)
	for path, src := range files {
		bodies, imports, err := exampleBodies(src)
		if err != nil {
			return 0, []string{"0: " + path + ": " + err.Error()}
		}
		names := make([]string, 0, len(bodies))
		for name := range bodies {
			names = append(names, name)
		}
		slices.Sort(names)
		examples[path] = parsed{bodies, imports, names}
	}
	for _, b := range goBlocks(md) {
		blocks++
		path := "example_test.go"
		for _, l := range b.lines {
			if m := contribImport.FindStringSubmatch(l); m != nil {
				path = m[1] + "/example_test.go"
				break
			}
		}
		ex, ok := examples[path]
		if !ok {
			problems = append(problems, fmt.Sprintf("%d: the go block imports a module whose %s was not read", b.line, path))
			continue
		}
		lines, err := checkImports(b.lines, ex.imports)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%d: %v", b.line, err))
			continue
		}
		want := normalise(lines)
		if len(want) == 0 {
			problems = append(problems, fmt.Sprintf("%d: empty go block", b.line))
			continue
		}
		var in []string
		for _, name := range ex.names {
			if containsRun(ex.bodies[name], want) {
				in = append(in, name)
			}
		}
		switch len(in) {
		case 1:
		case 0:
			problems = append(problems, fmt.Sprintf("%d: the go block starting %q is in no Example of %s: "+
				"every go block must be an excerpt of one (lines in order, contiguous; only its start and end left out)", b.line, want[0], path))
		default:
			problems = append(problems, fmt.Sprintf("%d: the go block starting %q is in %d Examples (%s): make it an excerpt of one",
				b.line, want[0], len(in), strings.Join(in, ", ")))
		}
	}
	return blocks, problems
}

// goBlock is a fenced ```go block: the line number of its first line of code, and its lines.
type goBlock struct {
	line  int
	lines []string
}

// goBlocks returns the ```go blocks of md. A fence is a line that starts (after indentation) with
// three backquotes; the info string must be exactly "go".
func goBlocks(md string) []goBlock {
	var out []goBlock
	var cur *goBlock
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !inFence && strings.HasPrefix(trimmed, "```"):
			inFence = true
			if strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "go" {
				cur = &goBlock{line: n + 1}
			}
		case inFence && trimmed == "```":
			inFence = false
			if cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	if cur != nil { // unterminated: still checked
		out = append(out, *cur)
	}
	return out
}

// exampleBodies parses an example file and returns the normalised lines of each Example function's
// body, and the paths the file imports.
func exampleBodies(src []byte) (map[string][]string, []string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		return nil, nil, err
	}
	bodies := map[string][]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		from, to := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
		bodies[fn.Name.Name] = normalise(strings.Split(string(src[from:to]), "\n"))
	}
	var imports []string
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			return nil, nil, err
		}
		imports = append(imports, p)
	}
	return bodies, imports, nil
}

// checkImports splits off an import declaration at the start of a block, checks that every path it
// imports is in imported, and returns the rest of the block.
func checkImports(lines []string, imported []string) ([]string, error) {
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i]), "import") {
		return lines, nil
	}
	end := i + 1 // just past the declaration
	if strings.HasSuffix(strings.TrimSpace(lines[i]), "(") {
		for end < len(lines) && strings.TrimSpace(lines[end]) != ")" {
			end++
		}
		end++
	}
	end = min(end, len(lines))
	decl := strings.Join(lines[i:end], "\n")
	f, err := parser.ParseFile(token.NewFileSet(), "README.md", "package p\n"+decl, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("the go block's import declaration does not parse: %v", err)
	}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if !slices.Contains(imported, p) {
			return nil, fmt.Errorf("the go block imports %q, which example_test.go does not", p)
		}
	}
	return lines[end:], nil
}

// normalise drops blank lines and indentation, and makes every run of white space one space (gofmt
// aligns comments differently in a README block and in the Example it comes from).
func normalise(lines []string) []string {
	var out []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

// containsRun reports whether want appears in have as a contiguous run.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
