package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

// exportedTypes are the exported types of the package, by name. TestInvalidValuesFailCleanly calls
// every exported method of their nil and zero values; it fails if the package declares an exported
// type that is not listed here.
var exportedTypes = map[string]reflect.Type{
	// Handles and held values: their methods are operations.
	"Client":                   reflect.TypeFor[redisson.Client](),
	"Lock":                     reflect.TypeFor[redisson.Lock](),
	"FairLock":                 reflect.TypeFor[redisson.FairLock](),
	"FencedLock":               reflect.TypeFor[redisson.FencedLock](),
	"SpinLock":                 reflect.TypeFor[redisson.SpinLock](),
	"ReadWriteLock":            reflect.TypeFor[redisson.ReadWriteLock](),
	"MultiLock":                reflect.TypeFor[redisson.MultiLock](),
	"RedLock":                  reflect.TypeFor[redisson.RedLock](),
	"Hold":                     reflect.TypeFor[redisson.Hold](),
	"Semaphore":                reflect.TypeFor[redisson.Semaphore](),
	"PermitExpirableSemaphore": reflect.TypeFor[redisson.PermitExpirableSemaphore](),
	"HeldPermits":              reflect.TypeFor[redisson.HeldPermits](),
	"CountDownLatch":           reflect.TypeFor[redisson.CountDownLatch](),
	"AtomicLong":               reflect.TypeFor[redisson.AtomicLong](),
	"BitSet":                   reflect.TypeFor[redisson.BitSet](),
	"BloomFilter":              reflect.TypeFor[redisson.BloomFilter](),
	"HyperLogLog":              reflect.TypeFor[redisson.HyperLogLog](),
	// Values: their methods describe them.
	"Error":         reflect.TypeFor[redisson.Error](),
	"Event":         reflect.TypeFor[redisson.Event](),
	"EventKind":     reflect.TypeFor[redisson.EventKind](),
	"BitField":      reflect.TypeFor[redisson.BitField](),
	"BloomConfig":   reflect.TypeFor[redisson.BloomConfig](),
	"Stats":         reflect.TypeFor[redisson.Stats](),
	"Inspection":    reflect.TypeFor[redisson.Inspection](),
	"Holder":        reflect.TypeFor[redisson.Holder](),
	"Waiter":        reflect.TypeFor[redisson.Waiter](),
	"Lease":         reflect.TypeFor[redisson.Lease](),
	"Process":       reflect.TypeFor[redisson.Process](),
	"Origin":        reflect.TypeFor[redisson.Origin](),
	"Kind":          reflect.TypeFor[redisson.Kind](),
	"Option":        reflect.TypeFor[redisson.Option](),
	"AcquireOption": reflect.TypeFor[redisson.AcquireOption](),
	"Locker":        reflect.TypeFor[redisson.Locker](), // an interface: no values of its own
}

// valueTypes are the listed types whose methods describe a value rather than operate on Redis:
// their zero values must not panic, and nothing more is asked of their answers.
var valueTypes = []string{"Error", "Event", "EventKind", "BitField", "BloomConfig", "Stats", "Inspection", "Holder", "Waiter", "Lease", "Process", "Origin", "Kind"}

// TestExportedTypesListed fails when the package declares an exported type that exportedTypes does
// not list (or lists one it no longer declares), so that every new type gets its methods checked.
func TestExportedTypesListed(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, f := range pkgs["redisson"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				if name := s.(*ast.TypeSpec).Name; name.IsExported() {
					declared[name.Name] = true
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("no exported type found in the package's files")
	}
	for name := range declared {
		if _, ok := exportedTypes[name]; !ok {
			t.Errorf("exported type %s is not in exportedTypes (invalid_test.go): add it, so that its nil and zero values are checked", name)
		}
	}
	for name := range exportedTypes {
		if !declared[name] {
			t.Errorf("exportedTypes lists %s, which the package does not declare", name)
		}
	}
}

// Every exported method of the nil and zero values of every exported type (a real
// context.Background() and zero values for the other arguments), and of the handles that a nil or
// zero Client returns, must not panic. On a handle, a method that returns an error returns one
// matching ErrInvalidArgument, and zero values besides; one that returns no error returns zero
// values (a context: one already done), except the name a handle was made with.
func TestInvalidValuesFailCleanly(t *testing.T) {
	names := make([]string, 0, len(exportedTypes))
	for name := range exportedTypes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		typ := exportedTypes[name]
		if typ.Kind() == reflect.Interface || typ.Kind() == reflect.Func {
			continue // no methods to call on a value of its own
		}
		value := slices.Contains(valueTypes, name)
		t.Run(name, func(t *testing.T) {
			// The zero value, addressed, has every method; the nil pointer only those with pointer
			// receivers (a value method called through a nil pointer panics in any Go type).
			checkMethods(t, "zero "+name, reflect.New(typ), value, false, 1)
			nilp := reflect.Zero(reflect.PointerTo(typ))
			for i := range nilp.NumMethod() {
				m := reflect.PointerTo(typ).Method(i)
				if _, byValue := typ.MethodByName(m.Name); !byValue {
					checkMethod(t, "nil *"+name, m.Name, nilp.Method(i), value, false, 1)
				}
			}
		})
	}
}

// checkMethods checks every exported method of recv (see TestInvalidValuesFailCleanly); handles
// returned by them are checked too while depth lasts.
func checkMethods(t *testing.T, what string, recv reflect.Value, value, named bool, depth int) {
	t.Helper()
	for i := range recv.NumMethod() {
		checkMethod(t, what, recv.Type().Method(i).Name, recv.Method(i), value, named, depth)
	}
}

var (
	ctxType   = reflect.TypeFor[context.Context]()
	errorType = reflect.TypeFor[error]()
)

// checkMethod calls method m of what (a bound method value) with context.Background() and zero
// values, and checks its answer. named: the receiver is a handle made with a name (Name may
// answer it).
func checkMethod(t *testing.T, what, m string, fn reflect.Value, value, named bool, depth int) {
	t.Helper()
	ft := fn.Type()
	in := make([]reflect.Value, 0, ft.NumIn())
	for i := range ft.NumIn() {
		if ft.IsVariadic() && i == ft.NumIn()-1 {
			break // no variadic arguments
		}
		if ft.In(i) == ctxType {
			in = append(in, reflect.ValueOf(context.Background()))
		} else {
			in = append(in, reflect.Zero(ft.In(i)))
		}
	}
	type answer struct {
		out      []reflect.Value
		panicked any
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- answer{panicked: r}
			}
		}()
		done <- answer{out: fn.Call(in)}
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("%s.%s blocked for 5s", what, m)
		return
	}
	if a.panicked != nil {
		t.Errorf("%s.%s panicked: %v", what, m, a.panicked)
		return
	}
	if value {
		return
	}
	var err error
	if n := ft.NumOut(); n > 0 && ft.Out(n-1) == errorType {
		err, _ = a.out[n-1].Interface().(error)
		if !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("%s.%s = %v; want an error matching ErrInvalidArgument", what, m, err)
		}
		a.out = a.out[:n-1]
	}
	for i, v := range a.out {
		switch {
		case v.Type() == ctxType:
			ctx, _ := v.Interface().(context.Context)
			if ctx == nil || ctx.Err() == nil {
				t.Errorf("%s.%s = %v; want a context already done", what, m, ctx)
			}
		case m == "Name" && named:
		case err == nil && depth > 0 && v.Kind() == reflect.Pointer && !v.IsNil() && listedHandle(v.Type().Elem()):
			// A handle made by an invalid Client: its calls must fail in turn.
			checkMethods(t, fmt.Sprintf("(%s.%s)", what, m), v, false, true, depth-1)
		case !v.IsZero():
			t.Errorf("%s.%s result %d = %v; want the zero value", what, m, i, v)
		}
	}
}

// listedHandle reports whether typ is one of exportedTypes that is not a value type.
func listedHandle(typ reflect.Type) bool {
	for name, lt := range exportedTypes {
		if lt == typ {
			return !slices.Contains(valueTypes, name)
		}
	}
	return false
}
