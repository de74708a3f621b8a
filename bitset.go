package redisson

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/scripts"
)

// BitSet is a set of bits in Redis, shared by every process that uses its name: Redisson's RBitSet.
// Get one with Client.BitSet; it is a name plus a client, does no I/O, and is safe to share between
// goroutines.
//
// The bits are a STRING at the object key, in Redis's bit order: bit i is bit 7 - i%8 (counting from
// the least significant) of byte i/8, so Bytes()[0] = 0x80 means bit 0 is set. An absent key is the
// empty set. Indices run from 0 to MaxBit (Redis strings are at most 512 MiB); the string grows to
// the highest bit set, and setting a high bit allocates every byte below it.
//
// Each method is one round trip and one atomic step in Redis (a Redis command, or a script for ranges,
// Length and SetBytes). Mutations are sent once, as AtomicLong's are: after a network error one may
// or may not have happened, never twice. Methods over several BitSets (And, Or, Xor) take names; on a
// Cluster they must share the BitSet's slot (a common {hash tag} prefix), else ErrInvalidArgument.
// A name holding another Redis type fails with ErrWrongType, nothing changed; any string is a valid
// BitSet.
type BitSet struct {
	object
}

// MaxBit is the highest bit index of a BitSet (and the highest bit a BitField may touch).
const MaxBit = 1<<32 - 1

// BitSet returns the BitSet called name. It does no I/O; the handle is cheap and safe to share. A bad
// name is reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) BitSet(name string) *BitSet {
	return &BitSet{c.newObject(name)}
}

// Name returns the name the BitSet was created with ("" for a nil handle).
func (b *BitSet) Name() string {
	if b == nil {
		return ""
	}
	return b.name
}

// check is object.check plus the bit indices, each in [0, MaxBit].
func (b *BitSet) check(ctx context.Context, bits ...int64) error {
	if b == nil {
		return invalidf("nil BitSet handle")
	}
	if err := b.object.check(ctx, "BitSet"); err != nil {
		return err
	}
	for _, i := range bits {
		if i < 0 || i > MaxBit {
			return invalidf("bit index %d: must be in [0, %d]", i, int64(MaxBit))
		}
	}
	return nil
}

// Get reports whether bit i is set. It blocks for one round trip. It fails with ErrInvalidArgument
// (i outside [0, MaxBit]), ErrWrongType, or a Redis error.
func (b *BitSet) Get(ctx context.Context, i int64) (bool, error) {
	if err := b.check(ctx, i); err != nil {
		return false, opErr("get", b.Name(), err)
	}
	var get *redis.IntCmd
	_ = b.c.read(ctx, b.key, func(p redis.Pipeliner) { get = p.GetBit(ctx, b.key, i) })
	v, err := get.Result()
	return v == 1, objectErr("get", b.name, err, nil)
}

// Set sets bit i and reports whether it was set before. It blocks for one round trip. It fails with
// ErrInvalidArgument (i outside [0, MaxBit]) or ErrWrongType (nothing changed, both),
// ErrNotReplicated (set on the master only), or a Redis error (the bit may or may not be set).
func (b *BitSet) Set(ctx context.Context, i int64) (bool, error) {
	return b.setBit(ctx, "set", i, 1)
}

// Clear clears bit i and reports whether it was set before. Clearing a bit past the end lengthens
// the string, as SETBIT does; ClearRange does not. Blocking and errors are those of Set.
func (b *BitSet) Clear(ctx context.Context, i int64) (bool, error) {
	return b.setBit(ctx, "clear", i, 0)
}

func (b *BitSet) setBit(ctx context.Context, op string, i int64, v int) (bool, error) {
	if err := b.check(ctx, i); err != nil {
		return false, opErr(op, b.Name(), err)
	}
	cmd, ackErr := mutate(ctx, b.c, b.key, nil, func() *redis.IntCmd { return redis.NewIntCmd(ctx, "setbit", b.key, i, v) })
	return cmd.Val() == 1, objectErr(op, b.name, cmd.Err(), ackErr)
}

// SetRange sets the bits [from, to); from == to is an empty range (nothing sent), from > to is
// refused, as Java's BitSet and Go's slicing do. It blocks for one round trip, one script that
// writes whole bytes at once, highest first, so that a string the server will not let grow that
// long (proto-max-bulk-len) fails before anything is written. It fails with ErrInvalidArgument
// (from or to outside [0, MaxBit+1], or from > to: nothing sent) or ErrWrongType (nothing changed),
// ErrNotReplicated, or a Redis error (the bits may or may not be set).
func (b *BitSet) SetRange(ctx context.Context, from, to int64) error {
	return b.setRange(ctx, "set range", from, to, "1")
}

// ClearRange clears the bits [from, to), never lengthening the string. Empty and reversed ranges,
// blocking and errors are those of SetRange.
func (b *BitSet) ClearRange(ctx context.Context, from, to int64) error {
	return b.setRange(ctx, "clear range", from, to, "0")
}

func (b *BitSet) setRange(ctx context.Context, op string, from, to int64, bit string) error {
	err := b.check(ctx)
	if err == nil && (from < 0 || from > MaxBit+1 || to < 0 || to > MaxBit+1) {
		err = invalidf("range [%d, %d): both ends must be in [0, %d]", from, to, int64(MaxBit)+1)
	}
	if err == nil && from > to {
		err = invalidf("range [%d, %d): from must not be greater than to", from, to)
	}
	if err != nil {
		return opErr(op, b.Name(), err)
	}
	if from == to {
		return nil
	}
	_, err = b.script(ctx, op, true, "range", from, to, bit)
	return err
}

// script runs bitset.lua: once (see object.go) if write, else as a read.
func (b *BitSet) script(ctx context.Context, op string, write bool, args ...any) (*redis.Cmd, error) {
	var cmd *redis.Cmd
	var ackErr error
	keys := []string{b.key}
	if write {
		cmd, ackErr = mutate(ctx, b.c, b.key, scripts.BitSet, func() *redis.Cmd {
			return scriptCmd(ctx, scripts.BitSet, keys, args...)
		})
	} else {
		cmd = b.c.run(ctx, scripts.BitSet, keys, args...)
	}
	return cmd, objectErr(op, b.name, cmd.Err(), ackErr)
}

// Cardinality returns the number of bits set. It blocks for one round trip (BITCOUNT). It fails
// with ErrWrongType or a Redis error.
func (b *BitSet) Cardinality(ctx context.Context) (int64, error) {
	if err := b.check(ctx); err != nil {
		return 0, opErr("cardinality", b.Name(), err)
	}
	var count *redis.IntCmd
	_ = b.c.read(ctx, b.key, func(p redis.Pipeliner) { count = p.BitCount(ctx, b.key, nil) })
	n, err := count.Result()
	return n, objectErr("cardinality", b.name, err, nil)
}

// Length returns the index of the highest bit set plus one (0 for an empty set), as Java's
// BitSet.length. It blocks for one round trip: a script that reads the string backwards from its
// end, so it takes longer the more zero bytes end the string. Errors are those of Cardinality.
func (b *BitSet) Length(ctx context.Context) (int64, error) {
	if err := b.check(ctx); err != nil {
		return 0, opErr("length", b.Name(), err)
	}
	cmd, err := b.script(ctx, "length", false, "length")
	if err != nil {
		return 0, err
	}
	n, _ := cmd.Int64()
	return n, nil
}

// Size returns the number of bits the string holds (8 × its length in bytes), set or not. It blocks
// for one round trip (STRLEN). Errors are those of Cardinality.
func (b *BitSet) Size(ctx context.Context) (int64, error) {
	if err := b.check(ctx); err != nil {
		return 0, opErr("size", b.Name(), err)
	}
	var strlen *redis.IntCmd
	_ = b.c.read(ctx, b.key, func(p redis.Pipeliner) { strlen = p.StrLen(ctx, b.key) })
	n, err := strlen.Result()
	return 8 * n, objectErr("size", b.name, err, nil)
}

// Bytes returns the bits as bytes, in Redis's bit order (see BitSet); nil for an empty set. It
// blocks for one round trip. Errors are those of Cardinality.
func (b *BitSet) Bytes(ctx context.Context) ([]byte, error) {
	if err := b.check(ctx); err != nil {
		return nil, opErr("bytes", b.Name(), err)
	}
	var get *redis.StringCmd
	_ = b.c.read(ctx, b.key, func(p redis.Pipeliner) { get = p.Get(ctx, b.key) })
	v, err := get.Bytes()
	if errors.Is(err, redis.Nil) || (err == nil && len(v) == 0) {
		return nil, nil
	}
	return v, objectErr("bytes", b.name, err, nil)
}

// SetBytes replaces the bits by p, in Redis's bit order (see BitSet); an empty p deletes the key
// (the empty set). It blocks for one round trip. It fails with ErrInvalidArgument (p longer than 512 MiB) or
// ErrWrongType (nothing changed, both), ErrNotReplicated, or a Redis error (the change may or may not
// have happened).
func (b *BitSet) SetBytes(ctx context.Context, p []byte) error {
	err := b.check(ctx)
	if err == nil && int64(len(p)) > (MaxBit+1)/8 {
		err = invalidf("%d bytes: at most %d", len(p), (MaxBit+1)/8)
	}
	if err != nil {
		return opErr("set bytes", b.Name(), err)
	}
	_, err = b.script(ctx, "set bytes", true, "bytes", p)
	return err
}

// And sets the BitSet to its AND with the BitSets called names (each ANDed in; a missing one is
// empty). It blocks for one round trip (BITOP). It fails with ErrInvalidArgument (a bad name, or on
// a Cluster a name in another slot) or ErrWrongType (nothing changed, both), ErrNotReplicated, or a
// Redis error (the change may or may not have happened).
func (b *BitSet) And(ctx context.Context, names ...string) error {
	return b.bitop(ctx, "and", names)
}

// Or sets the BitSet to its OR with the BitSets called names. As And.
func (b *BitSet) Or(ctx context.Context, names ...string) error {
	return b.bitop(ctx, "or", names)
}

// Xor sets the BitSet to its XOR with the BitSets called names. As And.
func (b *BitSet) Xor(ctx context.Context, names ...string) error {
	return b.bitop(ctx, "xor", names)
}

// Not flips every bit of the string (bits past its end stay clear: the string keeps its length). It
// blocks for one round trip (BITOP NOT). Errors are those of And.
func (b *BitSet) Not(ctx context.Context) error {
	return b.bitop(ctx, "not", nil)
}

func (b *BitSet) bitop(ctx context.Context, op string, names []string) error {
	if err := b.check(ctx); err != nil {
		return opErr(op, b.Name(), err)
	}
	keys, err := b.withOthers(names)
	if err != nil {
		return opErr(op, b.name, err)
	}
	cmd, ackErr := mutate(ctx, b.c, b.key, nil, func() *redis.IntCmd {
		args := []any{"bitop", op, b.key}
		for _, k := range keys {
			args = append(args, k)
		}
		return redis.NewIntCmd(ctx, args...)
	})
	return objectErr(op, b.name, cmd.Err(), ackErr)
}

// Delete removes the BitSet and reports whether it existed. It blocks for one round trip. It fails
// with ErrNotReplicated or a Redis error; any type under the name is deleted.
func (b *BitSet) Delete(ctx context.Context) (bool, error) {
	if b == nil {
		return false, opErr("delete", "", invalidf("nil BitSet handle"))
	}
	return b.del(ctx, "BitSet")
}

// BitField is the integer type of a field of a BitSet read and written as a number (Redis's
// BITFIELD): signed of 1 to 64 bits, or unsigned of 1 to 63. Make one with Signed or Unsigned; the
// zero BitField is invalid (ErrInvalidArgument).
type BitField struct {
	signed bool
	bits   uint8
}

// Signed returns the BitField of signed bits-bit integers (bits in [1, 64]).
func Signed(bits int) BitField { return BitField{true, uint8(min(max(bits, 0), 255))} }

// Unsigned returns the BitField of unsigned bits-bit integers (bits in [1, 63]).
func Unsigned(bits int) BitField { return BitField{false, uint8(min(max(bits, 0), 255))} }

// The usual fields.
var (
	Int8   = Signed(8)
	Int16  = Signed(16)
	Int32  = Signed(32)
	Int64  = Signed(64)
	Uint8  = Unsigned(8)
	Uint16 = Unsigned(16)
	Uint32 = Unsigned(32)
)

// String returns the type as BITFIELD writes it: "i8", "u16", ...
func (f BitField) String() string {
	if f.signed {
		return fmt.Sprintf("i%d", f.bits)
	}
	return fmt.Sprintf("u%d", f.bits)
}

// valid checks the type and that the field at bit offset fits in a BitSet.
func (f BitField) valid(offset int64) error {
	switch {
	case f.bits == 0, f.signed && f.bits > 64, !f.signed && f.bits > 63:
		return invalidf("bit field %s: signed fields have 1 to 64 bits, unsigned 1 to 63", f)
	case offset < 0 || offset > MaxBit+1-int64(f.bits):
		return invalidf("bit field %s at offset %d: must lie within bits [0, %d]", f, offset, int64(MaxBit))
	}
	return nil
}

// fits reports whether v is a value of the type.
func (f BitField) fits(v int64) bool {
	if f.signed {
		return f.bits == 64 || (v >= -1<<(f.bits-1) && v < 1<<(f.bits-1))
	}
	return v >= 0 && (f.bits == 63 || v < 1<<f.bits)
}

// GetField returns the integer of type f at bit offset (bits past the end of the string read as 0).
// It blocks for one round trip (BITFIELD_RO GET). It fails with ErrInvalidArgument (an invalid f,
// or a field not within [0, MaxBit]), ErrWrongType, or a Redis error.
func (b *BitSet) GetField(ctx context.Context, f BitField, offset int64) (int64, error) {
	err := b.check(ctx)
	if err == nil {
		err = f.valid(offset)
	}
	if err != nil {
		return 0, opErr("get field", b.Name(), err)
	}
	var field *redis.IntSliceCmd
	_ = b.c.read(ctx, b.key, func(p redis.Pipeliner) { field = p.BitFieldRO(ctx, b.key, f.String(), offset) })
	v, err := field.Result()
	if err != nil {
		return 0, objectErr("get field", b.name, err, nil)
	}
	return v[0], nil
}

// SetField writes v as the integer of type f at bit offset and returns the field's old value. It
// blocks for one round trip (BITFIELD SET). It fails with ErrInvalidArgument (an invalid f or
// offset, or v not a value of f) or ErrWrongType (nothing changed, both), ErrNotReplicated, or a
// Redis error (the field may or may not be written).
func (b *BitSet) SetField(ctx context.Context, f BitField, offset, v int64) (int64, error) {
	err := b.check(ctx)
	if err == nil {
		err = f.valid(offset)
	}
	if err == nil && !f.fits(v) {
		err = invalidf("%d is not a value of bit field %s", v, f)
	}
	if err != nil {
		return 0, opErr("set field", b.Name(), err)
	}
	return b.bitfield(ctx, "set field", "set", f, offset, v)
}

// AddField adds delta to the integer of type f at bit offset, wrapping around on overflow as Go's
// integer arithmetic does (BITFIELD's default), and returns the new value. It blocks for one round
// trip (BITFIELD INCRBY). Errors are those of SetField (delta need not be a value of f).
func (b *BitSet) AddField(ctx context.Context, f BitField, offset, delta int64) (int64, error) {
	err := b.check(ctx)
	if err == nil {
		err = f.valid(offset)
	}
	if err != nil {
		return 0, opErr("add field", b.Name(), err)
	}
	return b.bitfield(ctx, "add field", "incrby", f, offset, delta)
}

func (b *BitSet) bitfield(ctx context.Context, op, sub string, f BitField, offset, v int64) (int64, error) {
	cmd, ackErr := mutate(ctx, b.c, b.key, nil, func() *redis.IntSliceCmd {
		return redis.NewIntSliceCmd(ctx, "bitfield", b.key, sub, f.String(), offset, v)
	})
	if err := cmd.Err(); err != nil {
		return 0, objectErr(op, b.name, err, nil)
	}
	return cmd.Val()[0], objectErr(op, b.name, nil, ackErr)
}
