package redisson

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/minio/highwayhash"
	"github.com/redis/go-redis/v9"
	"github.com/zeebo/xxh3"

	"github.com/goredisson/redisson/internal/scripts"
)

// BloomFilter is a probabilistic set in Redis, shared by every process that uses its name:
// Redisson's RBloomFilter. Contains never answers false for an element that was added; it answers
// true for an element never added with a probability near the false-positive rate the filter was
// sized for, as long as no more elements were added than it was sized for. Get one with
// Client.BloomFilter and size it once with TryInit; the handle is a name plus a client, does no I/O,
// and is safe to share between goroutines.
//
// Layout: the configuration is a HASH at the object key, with the number of bits
// m = ⌈−n·ln p / (ln 2)²⌉ and of hash functions k = max(1, round(m/n · ln 2)) computed from the
// expected insertions n and the false-positive rate p, plus n, p and the name of the element hash;
// the bits are a STRING beside it, named after m and k ("<key>:~bf:<m>:<k>", same Cluster slot).
// The configuration holds the object key so that a lock or another object under the same name is
// refused (ErrWrongType) both ways. Every Client reads the configuration from Redis and keeps it, so
// all of them set and test the same bits.
//
// Hashing is client-side: each element is hashed once with XXH3-128, and its k bit indices come
// from the two 64-bit halves by enhanced double hashing (Dillinger and Manolios): x = h1 mod m,
// y = h2 mod m, then index i is x, and x += y, y += i (mod m). The bits of a whole batch go to Redis
// in one round trip, one BITFIELD per 1,950 bits (whole elements), with no script on the way:
//   - An add is a MULTI of HMGET (the configuration) and the BITFIELD SETs, atomic as a whole. A
//     Client whose parameters are stale (the filter was deleted, or deleted and made again with
//     others) sees it in the same reply, and its bits went to a key named after parameters no
//     filter has, which nobody reads: it deletes that key (unless a filter with those parameters was
//     made meanwhile), reads the parameters again and adds again, once. TryInit also deletes bits
//     left under its key by a Client that died between the two steps.
//   - A lookup is a pipeline of HMGET and BITFIELD_RO, the configuration checked on the reply. It
//     needs no MULTI: if the configuration read first is the one the Client computed with, every
//     element added before the lookup began is in those bits (a filter made again after that read
//     holds only elements added concurrently with the lookup).
//
// Add and AddMany are sent once, as AtomicLong's mutations are: after a network error the elements
// may or may not have been added (adding them again is harmless). A name whose object key holds
// another type, or a hash that is not a configuration, fails with ErrWrongType, nothing changed.
//
// In the Redisson-compatible mode (WithRedissonCompat) the filter is Java Redisson's RBloomFilter
// with StringCodec elements (an element is its UTF-8 bytes), shared with Java services: the bits
// are a STRING at the object key and the configuration a HASH at "{<key>}:config" ("<key>:config"
// when the name has a hash tag) with Redisson's fields size, hashIterations, expectedInsertions and
// falseProbability, written as Java writes them. TryInit sizes as Redisson's tryInit does, m =
// (long)(−n·ln p/(ln 2)²) truncated (at most 4,294,967,294 bits; p may be 0, sized as the smallest
// double, as Redisson does) and k = max(1, round(m/n·ln 2)); an element is hashed with
// HighwayHash-128 under Redisson's key, and index i is (h & (2^63−1)) mod m with h = h1, then h2
// and h1 added in turn. TryInit also takes a configuration made for the same n and p as its own
// (Java's logarithm may size it one bit apart, see javaLog). Adds are a script that checks the
// configuration before it sets a bit (Redisson's own add refuses a changed configuration too),
// since the bits key is the same for every configuration; lookups are checked on the reply as
// above. Count is Redisson's estimate (the same formula, evaluated as Java does: Long.MAX_VALUE
// with every bit set). A bitmap at the name is a string like a BitSet's or an AtomicLong's, so
// those kinds cannot be told from a filter's bits (see Keys in the package documentation).
type BloomFilter struct {
	object              // the configuration and the bits: see layout
	layout *bloomLayout // where and how they are stored
}

// BloomConfig is a BloomFilter's configuration, as TryInit stored it.
type BloomConfig struct {
	Insertions        int64   // the expected number of insertions n
	FalsePositiveRate float64 // the false-positive rate p at n insertions
	Bits              int64   // the number of bits m
	Hashes            int     // the number of hash functions k
}

// bloomHash names the element hash in the configuration: Clients hashing another way refuse it.
const bloomHash = "xxh3-128"

// Limits of a BloomFilter: at most MaxBit+1 bits (a Redis string's), 100 hash functions, and 1,950
// bits per BITFIELD (bounding one command's work).
const (
	maxBloomHashes   = 100
	bloomBitsPerCall = 1950
)

// bloomParams is what a Client needs to compute bit indices: m and k, checked against the configuration by every call.
type bloomParams struct {
	bits   uint64
	hashes int
	fields []string // the configuration's fields (the layout's) as last read and decoded, if known
}

// paramsOf returns the parameters of cfg, decoded from the fields raw (HMGET's reply).
func paramsOf(cfg BloomConfig, raw []any) bloomParams {
	p := bloomParams{bits: uint64(cfg.Bits), hashes: cfg.Hashes, fields: make([]string, len(raw))}
	for i := range p.fields {
		p.fields[i], _ = raw[i].(string)
	}
	return p
}

// bloomLayout is a stored format of BloomFilters: where the configuration and the bits are, the
// configuration's fields and their one Go decoder, the sizing, the element hash and index scheme,
// and how an add is kept from writing under a stale configuration. A Client's filters all use one
// (bloomLayoutOf): this package's own, or Java Redisson's (WithRedissonCompat).
type bloomLayout struct {
	script *redis.Script // "init", "delete", "count" (and "add" when guarded)
	fields []string      // the configuration's fields, in the order decode reads them
	args   []any         // fields as command arguments
	decode func(v []any) (BloomConfig, error)
	// size computes m and k for n and p (ErrInvalidArgument if it cannot); encode writes a
	// configuration's fields as "init" stores them, in fields' order.
	size   func(n int64, p float64) (int64, int, error)
	encode func(m int64, k int, n int64, p float64) []string
	// indices appends the k bit indices of e, all < m, to dst.
	indices func(dst []int64, e string, m uint64, k int) []int64
	// estimate is Count's estimate for m bits, k hashes and x bits set.
	estimate func(m int64, k int, x int64) int64
	// keys returns the configuration's key and that of the bits of a filter with parameters p.
	keys func(f *BloomFilter, p bloomParams) (config, bits string)
	// guarded: the bits are at one key whatever the configuration, so an add must check it before it
	// writes (the script's "add"), and a Client with stale parameters has written nothing. Otherwise
	// the bits are keyed by their parameters, and an add is a MULTI checked on its reply (addTx).
	guarded bool
}

// bloomLayouts are the layouts: this package's own, and Redisson's (bloomLayouts[true]).
var bloomLayouts = map[bool]*bloomLayout{
	false: {
		script: scripts.Bloom, fields: bloomFields, decode: decodeBloomConfig, size: BloomSize,
		encode: func(m int64, k int, n int64, p float64) []string {
			return []string{strconv.FormatInt(m, 10), strconv.Itoa(k), strconv.FormatInt(n, 10),
				strconv.FormatFloat(p, 'g', -1, 64), bloomHash}
		},
		indices: xxh3Indices,
		estimate: func(m int64, k int, x int64) int64 {
			if x >= m {
				return m // every bit set: the estimate is unbounded; m is as good as any
			}
			return int64(math.Round(-float64(m) / float64(k) * math.Log1p(-float64(x)/float64(m))))
		},
		keys: func(f *BloomFilter, p bloomParams) (string, string) {
			// The bits of a filter with parameters p: "<aux>:~bf:<m>:<k>".
			return f.key, f.aux(sfxBloomBits + strconv.FormatUint(p.bits, 10) + ":" + strconv.Itoa(p.hashes))
		},
	},
	true: {
		script: scripts.BloomCompat, fields: redissonBloomFields, decode: decodeRedissonBloomConfig,
		size: redissonBloomSize,
		encode: func(m int64, k int, n int64, p float64) []string {
			return []string{strconv.FormatInt(m, 10), strconv.Itoa(k), strconv.FormatInt(n, 10), javaDouble(p)}
		},
		indices:  highwayIndices,
		estimate: redissonEstimate,
		keys: func(f *BloomFilter, _ bloomParams) (string, string) {
			return redissonSuffixed(f.key, "config"), f.key
		},
		guarded: true,
	},
}

func init() {
	for _, l := range bloomLayouts {
		l.args = make([]any, len(l.fields))
		for i, f := range l.fields {
			l.args[i] = f
		}
	}
}

// bloomLayoutOf returns the layout of c's BloomFilters (this package's for a bad Client, whose
// handles refuse every call anyway).
func bloomLayoutOf(c *Client) *bloomLayout {
	return bloomLayouts[c.valid() && c.cfg.compat]
}

// BloomFilter returns the BloomFilter called name. It does no I/O; the handle is cheap and safe to
// share. A bad name is reported by the first call on the handle (ErrInvalidArgument).
func (c *Client) BloomFilter(name string) *BloomFilter {
	return &BloomFilter{object: c.newObject(name), layout: bloomLayoutOf(c)}
}

// Name returns the name the BloomFilter was created with ("" for a nil handle).
func (f *BloomFilter) Name() string {
	if f == nil {
		return ""
	}
	return f.name
}

func (f *BloomFilter) check(ctx context.Context) error {
	if f == nil {
		return invalidf("nil BloomFilter handle")
	}
	return f.object.check(ctx, "BloomFilter")
}

// BloomSize returns the number of bits and of hash functions of a BloomFilter for the expected
// insertions n and false-positive rate p (see BloomFilter), or an error matching ErrInvalidArgument
// if n < 1, p is not in (0, 1), or the filter would need more than 2^32 bits or 100 hash functions.
func BloomSize(n int64, p float64) (bits int64, hashes int, err error) {
	if n < 1 {
		return 0, 0, invalidf("expected insertions %d: must be at least 1", n)
	}
	if !(p > 0 && p < 1) {
		return 0, 0, invalidf("false-positive rate %v: must be in (0, 1)", p)
	}
	m := math.Ceil(-float64(n) * math.Log(p) / (math.Ln2 * math.Ln2))
	if m > MaxBit+1 {
		return 0, 0, invalidf("%d insertions at a false-positive rate of %v need %.0f bits: at most 2^32", n, p, m)
	}
	k := max(1, int(math.Round(m/float64(n)*math.Ln2)))
	if k > maxBloomHashes {
		return 0, 0, invalidf("a false-positive rate of %v needs %d hash functions: at most %d", p, k, maxBloomHashes)
	}
	return int64(m), k, nil
}

// TryInit sizes the filter for n expected insertions at false-positive rate p, if it has no
// configuration yet, and reports whether it did. If it has one that gives the same number of bits
// and hash functions, it returns false; if another, an error matching ErrConfigMismatch: a filter is
// never silently reshaped (Delete it first). It blocks for one round trip. It fails with
// ErrInvalidArgument (see BloomSize; in the Redisson-compatible mode, Redisson's refusals: see
// BloomFilter), ErrConfigMismatch or ErrWrongType (nothing changed, all three),
// ErrNotReplicated, or a Redis error (the outcome is unknown; trying again is safe).
func (f *BloomFilter) TryInit(ctx context.Context, n int64, p float64) (bool, error) {
	if err := f.check(ctx); err != nil {
		return false, opErr("try init", f.Name(), err)
	}
	m, k, err := f.layout.size(n, p)
	if err != nil {
		return false, opErr("try init", f.name, err)
	}
	params := bloomParams{bits: uint64(m), hashes: k}
	fields := f.layout.encode(m, k, n, p)
	epoch := f.c.bloomEpoch()
	cmd, ackErr := mutate(ctx, f.c, f.key, f.layout.script, func() *redis.Cmd {
		args := []any{"init"}
		for _, v := range fields {
			args = append(args, v)
		}
		return scriptCmd(ctx, f.layout.script, f.keys(params), args...)
	})
	v, err := cmd.Int64()
	if err != nil {
		return false, f.errOf("try init", err, fmt.Sprintf("%d insertions at %s (bits %d, hashes %d)", n, fields[3], m, k))
	}
	if v == 1 { // its fields are those sent (the layout's order)
		params.fields = fields
	}
	f.c.noteBloom(f.key, params, epoch)
	return v == 1, objectErr("try init", f.name, nil, ackErr)
}

// keys are the keys of the layout's script: the configuration and the bits for p.
func (f *BloomFilter) keys(p bloomParams) []string {
	config, bits := f.layout.keys(f, p)
	return []string{config, bits}
}

// configKey is the key of the configuration.
func (f *BloomFilter) configKey() string {
	config, _ := f.layout.keys(f, bloomParams{})
	return config
}

// bitsKey is the key of the bits of a filter with parameters p.
func (f *BloomFilter) bitsKey(p bloomParams) string {
	_, bits := f.layout.keys(f, p)
	return bits
}

// errOf explains an error of bloom.lua (or one already explained). A CONFIG error says what is
// stored and, if asked is not empty, what the caller asked for.
func (f *BloomFilter) errOf(op string, err error, asked string) error {
	switch {
	case errPrefix(err, "NOTINIT"):
		return opErr(op, f.name, ErrNotInitialized)
	case errPrefix(err, "CONFIG"):
		stored := strings.TrimPrefix(err.Error(), "CONFIG ")
		// "<bits> <hashes> <hash> <insertions> <fpr>" (bloom.lua; the hash is always this
		// package's) or "<size> <hashIterations> <expectedInsertions> <falseProbability>"
		// (bloom_compat.lua).
		if v := strings.Fields(stored); len(v) == 4 || len(v) == 5 {
			stored = fmt.Sprintf("%s insertions at %s (bits %s, hashes %s)", v[len(v)-2], v[len(v)-1], v[0], v[1])
		}
		msg := "stored: " + stored
		if asked != "" {
			msg += "; asked: " + asked
		}
		return opErr(op, f.name, ErrConfigMismatch, errors.New(msg))
	}
	return objectErr(op, f.name, err, nil)
}

// Config returns the filter's configuration. It blocks for one round trip. It fails with
// ErrNotInitialized (no configuration), ErrWrongType, or a Redis error.
func (f *BloomFilter) Config(ctx context.Context) (BloomConfig, error) {
	if err := f.check(ctx); err != nil {
		return BloomConfig{}, opErr("config", f.Name(), err)
	}
	cfg, _, err := f.load(ctx)
	if err != nil {
		return BloomConfig{}, opErr("config", f.name, err)
	}
	return cfg, nil
}

// load reads the configuration, remembers its parameters and returns them: the caller computes
// with these, not with what the Client remembers, which another call may have made it forget
// meanwhile (Delete, stale parameters found, the cache reset at maxNotes filters).
func (f *BloomFilter) load(ctx context.Context) (BloomConfig, bloomParams, error) {
	var fields *redis.SliceCmd
	var exists *redis.IntCmd
	epoch := f.c.bloomEpoch()
	// One MULTI: a configuration made between the two reads must not look like someone's hash.
	config := f.configKey()
	if _, err := f.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		fields = p.HMGet(ctx, config, f.layout.fields...)
		exists = p.Exists(ctx, config)
		return nil
	}); err != nil {
		return BloomConfig{}, bloomParams{}, redisErr(err)
	}
	v := fields.Val()
	if v[0] == nil {
		if exists.Val() == 0 {
			return BloomConfig{}, bloomParams{}, ErrNotInitialized
		}
		return BloomConfig{}, bloomParams{}, because(ErrWrongType, errors.New("a hash that is not a BloomFilter configuration"))
	}
	cfg, err := f.layout.decode(v)
	if err != nil {
		return BloomConfig{}, bloomParams{}, err
	}
	p := paramsOf(cfg, v)
	f.c.noteBloom(f.key, p, epoch)
	return cfg, p, nil
}

// bloomFields are the fields of a configuration, in the order decodeBloomConfig reads them.
var bloomFields = []string{"bits", "hashes", "insertions", "fpr", "hash"}

// decodeBloomConfig decodes a configuration's fields (bloomFields, as HMGET or bloom.lua's "count"
// return them): the one Go decoder of the format. Integers must be in Redis's canonical form and
// within BloomSize's limits, the rate in (0, 1), the hash this package's; else ErrWrongType.
func decodeBloomConfig(v []any) (BloomConfig, error) {
	s, cfg, hashes, err := parseBloomFields(v, len(bloomFields))
	if err != nil || s[4] != bloomHash || cfg.Bits < 1 || cfg.Bits > MaxBit+1 ||
		hashes < 1 || hashes > maxBloomHashes || cfg.Insertions < 1 || !(cfg.FalsePositiveRate > 0 && cfg.FalsePositiveRate < 1) {
		return BloomConfig{}, because(ErrWrongType, fmt.Errorf("not a BloomFilter configuration (bits %q, hashes %q, insertions %q, fpr %q, hash %q)",
			s[0], s[1], s[2], s[3], s[4]))
	}
	return cfg, nil
}

// parseBloomFields reads the n fields of a configuration as HMGET returns them (strings; a missing
// field is "") and parses the first four, which both formats keep in this order: the number of
// bits, of hash functions and of expected insertions (canonical integers), and the false-positive
// rate. The decoders check the ranges and the rest.
func parseBloomFields(v []any, n int) (s []string, cfg BloomConfig, hashes int64, err error) {
	s = make([]string, n)
	for i := range s {
		if i < len(v) {
			s[i], _ = v[i].(string)
		}
	}
	var err1, err2, err3, err4 error
	cfg.Bits, err1 = parseInt64Value(s[0])
	hashes, err2 = parseInt64Value(s[1])
	cfg.Insertions, err3 = parseInt64Value(s[2])
	cfg.FalsePositiveRate, err4 = strconv.ParseFloat(s[3], 64)
	cfg.Hashes = int(hashes)
	return s, cfg, hashes, errors.Join(err1, err2, err3, err4)
}

// Java Redisson's layout (WithRedissonCompat): RedissonBloomFilter's, with StringCodec elements.

// redissonBloomFields are the fields of a configuration in Redisson's layout, in the order
// decodeRedissonBloomConfig reads them.
var redissonBloomFields = []string{"size", "hashIterations", "expectedInsertions", "falseProbability"}

// Limits of Redisson's layout: its tryInit refuses more than maxRedissonBloomBits bits (getMaxSize,
// 2·(2^31−1)), and computes at most maxRedissonBloomHashes hash functions (−log2 of the smallest
// double: k ≈ −log2 p).
const (
	maxRedissonBloomBits   = 2 * math.MaxInt32
	maxRedissonBloomHashes = 1074
)

// redissonBloomKey is Redisson's HighwayHash key (Hash.KEY), as the little-endian bytes of its four
// longs.
var redissonBloomKey = func() []byte {
	b := make([]byte, 0, 32)
	for _, w := range []uint64{0x9e3779b97f4a7c15, 0xf39cc0605cedc834, 0x1082276bf3a27251, 0xf86c6a11d0c18e95} {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}()

// redissonHash is Redisson's Hash.hash128 of e's bytes: HighwayHash-128 under Redisson's key, as
// the two longs of its long[2] (the little-endian halves of the 16-byte digest).
func redissonHash(e string) (h1, h2 uint64) {
	d := highwayhash.Sum128([]byte(e), redissonBloomKey)
	return binary.LittleEndian.Uint64(d[:8]), binary.LittleEndian.Uint64(d[8:])
}

// highwayIndices appends the k bit indices of element e to dst as RedissonBloomFilter computes
// them: h = h1; index i = (h & Long.MAX_VALUE) % m, then h += h2 after an even i and h += h1 after
// an odd one (wrapping, as Java's longs do).
func highwayIndices(dst []int64, e string, m uint64, k int) []int64 {
	h1, h2 := redissonHash(e)
	h := h1
	for i := range k {
		dst = append(dst, int64((h&math.MaxInt64)%m))
		if i%2 == 0 {
			h += h2
		} else {
			h += h1
		}
	}
	return dst
}

// redissonBloomSize computes m and k as Redisson's tryInit does: m = (long)(−n·ln p/(ln 2)²),
// truncated, with p = 0 taken as the smallest double, and k = max(1, (int)Math.round(m/n·ln 2)).
// Its refusals are Redisson's (p outside [0, 1], m = 0, m > 4,294,967,294) and n < 1 (Redisson
// would store a filter it cannot use), all matching ErrInvalidArgument.
func redissonBloomSize(n int64, p float64) (int64, int, error) {
	if n < 1 {
		return 0, 0, invalidf("expected insertions %d: must be at least 1", n)
	}
	if !(p >= 0 && p < 1) { // Redisson: p > 1 and p < 0 refused, p = 1 and NaN give m = 0
		return 0, 0, invalidf("false-positive rate %v: must be in [0, 1)", p)
	}
	// Java: (long) (-n * Math.log(p) / (Math.log(2) * Math.log(2))), left to right in doubles.
	mf := float64(-n) * javaLog(p) / (math.Ln2 * math.Ln2)
	if mf >= maxRedissonBloomBits+1 {
		return 0, 0, invalidf("%d insertions at a false-positive rate of %v need %.0f bits: at most %d (Redisson's limit)", n, p, math.Trunc(mf), int64(maxRedissonBloomBits))
	}
	m := int64(mf)
	if m == 0 {
		return 0, 0, invalidf("%d insertions at a false-positive rate of %v need 0 bits (Redisson truncates)", n, p)
	}
	// Java: Math.max(1, (int) Math.round((double) m / n * Math.log(2))); Math.round is half up,
	// math.Round half away from zero: the same for the positive values here.
	k := max(1, int(math.Round(float64(m)/float64(n)*math.Ln2)))
	return m, k, nil
}

// javaLog is Math.log(p) for the p of redissonBloomSize, 0 taken as Double.MIN_VALUE. It is
// math.Log, except below the smallest normal double, where Go's amd64 math.Log is wrong (it answers
// ln of about 2^-1022 for every subnormal): there p is scaled by 2^54 first, which gives Java's
// value for Double.MIN_VALUE and is within an ulp of it for the others. Java's Math.log (a HotSpot
// intrinsic, not StrictMath's fdlibm) and math.Log differ in the last bit for about 1% of the rates
// one would choose (0.01, 0.03, ...); m changes by one only where −n·ln p/(ln 2)² is within about
// m·10^-16 of an integer, and both sides read m from Redis anyway.
func javaLog(p float64) float64 {
	if p == 0 {
		p = math.SmallestNonzeroFloat64
	}
	if p < 0x1p-1022 {
		return math.Log(p*0x1p54) - 54*math.Ln2
	}
	return math.Log(p)
}

// redissonEstimate is Redisson's count(): Math.round(-size / (double) hashIterations * Math.log(1 -
// c / (double) size)), evaluated as Java does (Math.round of +Inf, every bit set, is Long.MAX_VALUE;
// of NaN, 0).
func redissonEstimate(m int64, k int, x int64) int64 {
	v := float64(-m) / float64(k) * math.Log(1-float64(x)/float64(m))
	switch {
	case math.IsNaN(v): // more bits set than m (a bitmap longer than the filter)
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Round(v)) // v ≥ 0: half up, as Math.round
}

// javaDouble writes x as Java's Double.toString does (JDK 19 and later, whose digits are the
// shortest that read back as x: older JDKs sometimes wrote more, which decodes all the same):
// "0.01", "0.5", "1.0E-4", "4.9E-324", "0.0". Finite values only.
func javaDouble(x float64) string {
	if x == 0 {
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // "d.ddde±xx", the shortest digits
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	if len(digits) == 1 {
		// Java picks, among the decimals of one or two digits that read back as x, the closest:
		// only a subnormal can have one (4.9E-324 rather than 5E-324).
		two := strconv.FormatFloat(x, 'e', 1, 64)
		if v, err := strconv.ParseFloat(two, 64); err == nil && v == x {
			mant, exp, _ = strings.Cut(two, "e")
			digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
		}
	}
	n, _ := strconv.Atoi(exp) // x = 0.digits × 10^(n+1)
	if x >= 1e-3 && x < 1e7 {
		point := n + 1 // digits before the decimal point
		switch {
		case point <= 0:
			return sign + "0." + strings.Repeat("0", -point) + digits
		case point >= len(digits):
			return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
		default:
			return sign + digits[:point] + "." + digits[point:]
		}
	}
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return sign + digits[:1] + "." + frac + "E" + strconv.Itoa(n)
}

// javaDoubleSyntax reports whether s is written as Java's Double.toString writes a finite double:
// digits, a point and digits, then possibly "E" and an exponent.
func javaDoubleSyntax(s string) bool {
	s = strings.TrimPrefix(s, "-")
	mant, exp, sci := strings.Cut(s, "E")
	whole, frac, ok := strings.Cut(mant, ".")
	digits := func(d string) bool {
		return d != "" && strings.Trim(d, "0123456789") == ""
	}
	return ok && digits(whole) && digits(frac) && (!sci || digits(strings.TrimPrefix(exp, "-")))
}

// decodeRedissonBloomConfig decodes a configuration in Redisson's layout (redissonBloomFields, as
// HMGET or bloom_compat.lua's "count" return them): the one Go decoder of that format. size,
// hashIterations and expectedInsertions must be canonical integers within Redisson's limits (size
// at most 4,294,967,294, hashIterations at most 1074, all at least 1), falseProbability a double
// as Java writes it, in [0, 1); else ErrWrongType.
func decodeRedissonBloomConfig(v []any) (BloomConfig, error) {
	s, cfg, hashes, err := parseBloomFields(v, len(redissonBloomFields))
	if err != nil || !javaDoubleSyntax(s[3]) ||
		cfg.Bits < 1 || cfg.Bits > maxRedissonBloomBits || hashes < 1 || hashes > maxRedissonBloomHashes ||
		cfg.Insertions < 1 || !(cfg.FalsePositiveRate >= 0 && cfg.FalsePositiveRate < 1) {
		return BloomConfig{}, because(ErrWrongType, fmt.Errorf("not a Redisson BloomFilter configuration (size %q, hashIterations %q, expectedInsertions %q, falseProbability %q)",
			s[0], s[1], s[2], s[3]))
	}
	return cfg, nil
}

// params returns the parameters to compute indices with: those the Client remembers, or those read
// (the ones load returned: the Client may have forgotten them already). A filter without a
// configuration is ErrNotInitialized.
func (f *BloomFilter) params(ctx context.Context) (bloomParams, error) {
	if p, ok := f.c.bloomParams(f.key); ok {
		return p, nil
	}
	_, p, err := f.load(ctx)
	if err != nil {
		return bloomParams{}, err
	}
	if f.c.bloomLoaded != nil {
		f.c.bloomLoaded()
	}
	return p, nil
}

// usable returns nil if p can compute indices: 1 ≤ m ≤ MaxBit+1 and 1 ≤ k ≤ 1074, as every
// layout's sizing and decoder guarantee; else an error matching ErrNotInitialized, so that parameters
// the Client does not have (the zero value) never reach a division.
func (p bloomParams) usable() error {
	if p.bits < 1 || p.bits > MaxBit+1 || p.hashes < 1 || p.hashes > maxRedissonBloomHashes {
		return because(ErrNotInitialized, fmt.Errorf("no usable parameters (bits %d, hashes %d)", p.bits, p.hashes))
	}
	return nil
}

// xxh3Indices appends the k bit indices of element e to dst: this package's layout (see BloomFilter).
func xxh3Indices(dst []int64, e string, m uint64, k int) []int64 {
	h := xxh3.HashString128(e)
	x, y := h.Lo%m, h.Hi%m
	for i := range k {
		dst = append(dst, int64(x))
		x = (x + y) % m
		y = (y + uint64(i)) % m
	}
	return dst
}

// allIndices returns the k bit indices of each element, in order, or an error if p is not usable.
func (l *bloomLayout) allIndices(p bloomParams, elements []string) ([]int64, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	bits := make([]int64, 0, p.hashes*len(elements))
	for _, e := range elements {
		bits = l.indices(bits, e, p.bits, p.hashes)
	}
	return bits, nil
}

// perCall is how many elements go into one BITFIELD: whole elements, at most bloomBitsPerCall bits
// (one, whatever k, if k < 1: never a division by zero).
func (p bloomParams) perCall() int { return max(1, bloomBitsPerCall/max(1, p.hashes)) }

// BITFIELD's constant arguments, boxed once.
var (
	argGet any = "GET"
	argSet any = "SET"
	argU1  any = "u1"
	argOne any = "1"
)

// staleErr reports whether err says the Client's parameters are not those in Redis (the filter was
// deleted, or deleted and made again with other ones).
func staleErr(err error) bool {
	return errPrefix(err, "CONFIG") || errPrefix(err, "NOTINIT")
}

// addBits sets the bits of elements in one round trip, sent once, through the layout's add (addTx
// or addGuarded). If the configuration is not the one the Client computed with (stale parameters:
// the filter was deleted, or made again with others), the Client forgets its parameters (and deletes
// what it wrote under them, if it wrote anything: see stale), reads them again and adds again, once.
// It returns how many elements were new, the error, and ackErr.
func (f *BloomFilter) addBits(ctx context.Context, elements []string) (added int, err, ackErr error) {
	add := (*BloomFilter).addTx
	if f.layout.guarded {
		add = (*BloomFilter).addGuarded
	}
	for retried := false; ; retried = true {
		p, err := f.params(ctx)
		if err != nil {
			return 0, err, nil
		}
		bits, err := f.layout.allIndices(p, elements)
		if err != nil {
			return 0, err, nil
		}
		added, stale, err, ackErr := add(f, ctx, p, bits, len(elements))
		if !stale {
			return added, err, ackErr
		}
		if derr := f.stale(ctx, p); derr != nil {
			return 0, derr, nil
		}
		switch {
		case err != nil:
			return 0, err, nil
		case retried:
			return 0, because(ErrConfigMismatch, errors.New("the configuration changed while adding")), nil
		}
	}
}

// addTx sets bits, the indices of n elements with parameters p, under this package's layout: a MULTI
// of HMGET (the configuration) and one BITFIELD SET per perCall elements, the configuration checked
// on the reply. stale reports a configuration that is not p's (err then says why if it is not a
// configuration at all): the bits went to a key named after p, which nobody reads.
func (f *BloomFilter) addTx(ctx context.Context, p bloomParams, bits []int64, n int) (added int, stale bool, err, ackErr error) {
	key, per := f.bitsKey(p), p.perCall()
	cmds := [][]any{append([]any{"hmget", f.configKey()}, f.layout.args...)}
	for i := 0; i < n; i += per {
		part := bits[i*p.hashes : min(i+per, n)*p.hashes]
		args := append(make([]any, 0, 2+4*len(part)), "bitfield", key)
		for _, b := range part {
			args = append(args, argSet, argU1, b, argOne)
		}
		cmds = append(cmds, args)
	}
	replies, ackErr, err := f.c.execOnce(ctx, f.key, cmds)
	if err != nil {
		return 0, false, err, nil
	}
	cfg, _ := replies[0].([]any)
	current, cerr := f.layout.current(p, cfg, asErr(replies[0]))
	if !current {
		return 0, true, cerr, nil
	}
	for _, r := range replies[1:] {
		old, ok := r.([]any)
		if !ok {
			return added, false, cmp.Or(asErr(r), fmt.Errorf("BITFIELD answered %T", r)), ackErr
		}
		for e := 0; e+p.hashes <= len(old); e += p.hashes {
			if slices.Contains(old[e:e+p.hashes], any(int64(0))) {
				added++
			}
		}
	}
	return added, false, nil, ackErr
}

// addGuarded sets bits, the indices of n elements with parameters p, under a guarded layout: one
// call of the script's "add", which checks the configuration before it writes. stale reports a
// configuration that is not p's, or none (nothing was written).
func (f *BloomFilter) addGuarded(ctx context.Context, p bloomParams, bits []int64, n int) (added int, stale bool, err, ackErr error) {
	cmd, ackErr := mutate(ctx, f.c, f.key, f.layout.script, func() *redis.Cmd {
		args := append(make([]any, 0, 3+len(bits)), "add", p.bits, p.hashes)
		for _, b := range bits {
			args = append(args, b)
		}
		return scriptCmd(ctx, f.layout.script, f.keys(p), args...)
	})
	v, err := cmd.Int64()
	switch {
	case staleErr(err):
		return 0, true, nil, nil
	case err != nil:
		return 0, false, err, nil
	}
	return int(v), false, nil, ackErr
}

// current reports whether cfg, the configuration's fields (the layout's) as HMGET read them, is a
// configuration with parameters p. It returns ErrWrongType if cfg is not a configuration (or err,
// the HMGET's own error, says the key holds another type); false and nil if there is none or it has
// other parameters (the Client's are stale).
func (l *bloomLayout) current(p bloomParams, cfg []any, err error) (bool, error) {
	switch {
	case err != nil:
		return false, redisErr(err)
	case len(cfg) == 0 || cfg[0] == nil:
		return false, nil // none, or a hash of someone else's: load tells them apart
	case len(p.fields) > 0 && len(cfg) == len(p.fields):
		same := true // the fields the Client decoded last time: no need to decode them again
		for i, f := range p.fields {
			same = same && cfg[i] == f
		}
		if same {
			return true, nil
		}
	}
	c, err := l.decode(cfg)
	if err != nil {
		return false, err
	}
	return uint64(c.Bits) == p.bits && c.Hashes == p.hashes, nil
}

// stale handles parameters p found stale: the parameters are forgotten, and, unless the layout is
// guarded (an add under stale parameters writes nothing there), the bits the Client may have written
// under them (an add just now, or earlier with its reply lost) are deleted unless a filter with p
// exists again. The deletion runs even if ctx has ended (see Client.cleanup).
func (f *BloomFilter) stale(ctx context.Context, p bloomParams) error {
	f.c.forgetBloom(f.key)
	if f.layout.guarded {
		return nil
	}
	var err error
	if !f.c.cleanup(ctx, func(ctx context.Context) {
		err = f.c.run(ctx, scripts.Bloom, f.keys(p), "drop", p.bits, p.hashes, bloomHash).Err()
	}) {
		return ctx.Err() // the deletion goes on in the background
	}
	return redisErr(err)
}

// asErr returns r if it is an error, else nil.
func asErr(r any) error {
	err, _ := r.(error)
	return err
}

// hasBits reads the bits of elements: a pipeline of HMGET (the configuration) and one BITFIELD_RO
// per perCall elements, in one round trip; the configuration is checked on the reply (see
// BloomFilter: a read needs no more).
// Stale parameters are read again and the bits read again, once.
func (f *BloomFilter) hasBits(ctx context.Context, elements []string) ([]bool, error) {
	p, err := f.params(ctx)
	if err != nil {
		return nil, err
	}
	for retried := false; ; retried = true {
		bits, err := f.layout.allIndices(p, elements)
		if err != nil {
			return nil, err
		}
		per, config := p.perCall(), f.configKey()
		var cfg *redis.SliceCmd
		var parts []*redis.IntSliceCmd
		for attempt := 0; ; attempt++ {
			parts = parts[:0]
			err = f.c.read(ctx, f.key, func(pipe redis.Pipeliner) {
				cfg = pipe.HMGet(ctx, config, f.layout.fields...)
				for i := 0; i < len(elements); i += per {
					part := bits[i*p.hashes : min(i+per, len(elements))*p.hashes]
					args := append(make([]any, 0, 2+3*len(part)), "bitfield_ro", f.bitsKey(p))
					for _, b := range part {
						args = append(args, argGet, argU1, b)
					}
					cmd := redis.NewIntSliceCmd(ctx, args...)
					parts = append(parts, cmd)
					_ = pipe.Process(ctx, cmd)
				}
			})
			if !f.c.refused(err) || !retryPause(ctx, attempt) {
				break
			}
		}
		if err != nil {
			return nil, redisErr(err)
		}
		current, err := f.layout.current(p, cfg.Val(), nil)
		switch {
		case err != nil:
			return nil, err
		case !current:
			if err := f.stale(ctx, p); err != nil {
				return nil, err
			}
			// The parameters read are the ones to use (the Client may have forgotten them again).
			if _, p, err = f.load(ctx); err != nil { // ErrNotInitialized, or a hash of someone else's
				return nil, err
			}
			if retried {
				return nil, because(ErrConfigMismatch, errors.New("the configuration changed while reading"))
			}
			continue
		}
		out := make([]bool, 0, len(elements))
		for _, cmd := range parts {
			got := cmd.Val()
			for e := 0; e+p.hashes <= len(got); e += p.hashes {
				all := true
				for _, b := range got[e : e+p.hashes] {
					all = all && b == 1
				}
				out = append(out, all)
			}
		}
		if len(out) != len(elements) {
			return nil, fmt.Errorf("%d answers for %d elements", len(out), len(elements))
		}
		return out, nil
	}
}

// Add adds element and reports whether it was new (some of its bits were clear: a false positive
// makes a new element look old). It blocks for one round trip (two the first time the Client uses
// the filter: it reads the configuration). It fails with ErrNotInitialized or ErrWrongType
// (nothing changed, both), ErrConfigMismatch (the filter was made again twice during the call:
// nothing added to the current one), ErrNotReplicated, or a Redis error (the element may or may not
// have been added).
func (f *BloomFilter) Add(ctx context.Context, element string) (bool, error) {
	n, err := f.add(ctx, "add", []string{element})
	return n == 1, err
}

// AddMany adds elements and returns how many were new (see Add), in one round trip however many
// there are, atomically (one MULTI); no elements is a no-op that sends nothing. Errors are those of
// Add.
func (f *BloomFilter) AddMany(ctx context.Context, elements []string) (int, error) {
	return f.add(ctx, "add many", elements)
}

func (f *BloomFilter) add(ctx context.Context, op string, elements []string) (int, error) {
	if err := f.check(ctx); err != nil {
		return 0, opErr(op, f.Name(), err)
	}
	if len(elements) == 0 {
		return 0, nil
	}
	added, err, ackErr := f.addBits(ctx, elements)
	if err != nil {
		return added, f.errOf(op, err, "")
	}
	return added, objectErr(op, f.name, nil, ackErr)
}

// Contains reports whether element may have been added: false means it was not; true means it was,
// or it is a false positive. It blocks for one round trip (two the first time the Client uses the
// filter). It fails with ErrNotInitialized, ErrWrongType, ErrConfigMismatch (the filter was made
// again twice during the call), or a Redis error.
func (f *BloomFilter) Contains(ctx context.Context, element string) (bool, error) {
	v, err := f.contains(ctx, "contains", []string{element})
	return err == nil && v[0], err
}

// ContainsMany reports, for each element, whether it may have been added (see Contains), in one
// round trip however many there are; no elements is a no-op that sends nothing. Errors are those of
// Contains.
func (f *BloomFilter) ContainsMany(ctx context.Context, elements []string) ([]bool, error) {
	return f.contains(ctx, "contains many", elements)
}

func (f *BloomFilter) contains(ctx context.Context, op string, elements []string) ([]bool, error) {
	if err := f.check(ctx); err != nil {
		return nil, opErr(op, f.Name(), err)
	}
	if len(elements) == 0 {
		return []bool{}, nil
	}
	out, err := f.hasBits(ctx, elements)
	if err != nil {
		return nil, opErr(op, f.name, err)
	}
	return out, nil
}

// Count estimates how many distinct elements were added, from the number of bits set X:
// −(m/k)·ln(1 − X/m) (Swamidass and Baldi), rounded; m if every bit is set (in the
// Redisson-compatible mode, Redisson's evaluation of it: math.MaxInt64 then). It blocks for one
// round trip. It fails with ErrNotInitialized, ErrWrongType, or a Redis error.
func (f *BloomFilter) Count(ctx context.Context) (int64, error) {
	if err := f.check(ctx); err != nil {
		return 0, opErr("count", f.Name(), err)
	}
	v, err := f.withParams(ctx, func(p bloomParams) (any, error) {
		return f.c.run(ctx, f.layout.script, f.keys(p), "count", p.bits, p.hashes, bloomHash).Slice()
	})
	if err != nil {
		return 0, f.errOf("count", err, "")
	}
	reply := v.([]any)
	cfg, err := f.layout.decode(reply)
	if err != nil {
		return 0, opErr("count", f.name, err)
	}
	x, _ := reply[len(reply)-1].(int64)
	return f.layout.estimate(cfg.Bits, cfg.Hashes, x), nil
}

// withParams runs call with the Client's parameters of the filter and, if they were stale (a
// CONFIG or NOTINIT answer), once more with parameters read again.
func (f *BloomFilter) withParams(ctx context.Context, call func(bloomParams) (any, error)) (any, error) {
	for retried := false; ; retried = true {
		p, err := f.params(ctx)
		if err != nil {
			return nil, err
		}
		v, err := call(p)
		if !staleErr(err) || retried {
			return v, err
		}
		if err := f.stale(ctx, p); err != nil {
			return nil, err
		}
	}
}

// Delete removes the filter (bits and configuration) and reports whether there was anything to
// remove. It blocks for one round trip (two the first time the Client uses the filter). It fails
// with ErrWrongType (the name holds another type, or a hash that is not a configuration: nothing
// deleted), ErrConfigMismatch (the filter was made again twice during the call: nothing deleted),
// ErrNotReplicated, or a Redis error (the filter may or may not have been deleted).
func (f *BloomFilter) Delete(ctx context.Context) (bool, error) {
	if f == nil {
		return false, opErr("delete", "", invalidf("nil BloomFilter handle"))
	}
	if err := f.check(ctx); err != nil {
		return false, opErr("delete", f.name, err)
	}
	var ackErr error
	v, err := f.withParams(ctx, func(p bloomParams) (any, error) {
		cmd, aerr := mutate(ctx, f.c, f.key, f.layout.script, func() *redis.Cmd {
			return scriptCmd(ctx, f.layout.script, f.keys(p), "delete", p.bits, p.hashes, bloomHash)
		})
		ackErr = aerr
		return cmd.Int64()
	})
	f.c.forgetBloom(f.key)
	switch {
	case errors.Is(err, ErrNotInitialized):
		return false, nil
	case err != nil:
		return false, f.errOf("delete", err, "")
	}
	return v.(int64) == 1, objectErr("delete", f.name, nil, ackErr)
}
