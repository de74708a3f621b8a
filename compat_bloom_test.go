package redisson_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/highwayhash"
	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redistest"
)

// The Redisson-compatible BloomFilter (WithRedissonCompat): Java Redisson's RBloomFilter<String>
// with StringCodec. Java's side is played by javaBloom, written from RedissonBloomFilter.java and
// misc/Hash.java (Redisson 3.x): raw commands on the bitmap at the name and the configuration hash
// at "{name}:config", its own sizing, hash and index code. The known answers below were computed by
// Redisson's own HighwayHash.java and RedissonBloomFilter's sizing, index and count expressions,
// run on OpenJDK 17 (Hash.calcHash's packet/remainder loop over the UTF-8 bytes, Hash.KEY).

// javaBloom is a Java Redisson RBloomFilter<String> (StringCodec) on rdb, by raw commands.
type javaBloom struct {
	rdb          redis.UniversalClient
	name, config string
}

func newJavaBloom(rdb redis.UniversalClient, name string) *javaBloom {
	config := "{" + name + "}:config" // RedissonObject.suffixName
	if strings.Contains(name, "{") {
		config = name + ":config"
	}
	return &javaBloom{rdb: rdb, name: name, config: config}
}

// javaHashKey is Hash.KEY, the four longs written little-endian (HighwayHash reads its key so).
var javaHashKey, _ = hex.DecodeString("157c4a7fb979379e" + "34c8ed5c60c09cf3" + "5172a2f36b278210" + "958ec1d0116a6cf8")

// javaHash is Hash.hash128 of s's UTF-8 bytes: the long[2] of HighwayHash's finalize128.
func javaHash(s string) (int64, int64) {
	h, err := highwayhash.New128(javaHashKey)
	if err != nil {
		panic(err)
	}
	_, _ = h.Write([]byte(s))
	d := h.Sum(nil)
	return int64(binary.LittleEndian.Uint64(d[:8])), int64(binary.LittleEndian.Uint64(d[8:]))
}

// javaIndexes is RedissonBloomFilter.hash(hash1, hash2, iterations, size), in Java's signed longs.
func javaIndexes(s string, size int64, iterations int) []int64 {
	hash1, hash2 := javaHash(s)
	idx := make([]int64, iterations)
	hash := hash1
	for i := range iterations {
		idx[i] = (hash & math.MaxInt64) % size
		if i%2 == 0 {
			hash += hash2
		} else {
			hash += hash1
		}
	}
	return idx
}

// javaSize is optimalNumOfBits and optimalNumOfHashFunctions (p > 0 here).
func javaSize(n int64, p float64) (int64, int) {
	m := int64(float64(-n) * math.Log(p) / (math.Log(2) * math.Log(2)))
	return m, max(1, int(math.Floor(float64(m)/float64(n)*math.Log(2)+0.5)))
}

// tryInit is tryInitAsync: fpr is Double.toString(p), as StringCodec writes it.
func (j *javaBloom) tryInit(t *testing.T, n int64, p float64, fpr string) bool {
	t.Helper()
	m, k := javaSize(n, p)
	v, err := j.rdb.Eval(t.Context(), `if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('hset', KEYS[1], 'size', ARGV[1], 'hashIterations', ARGV[2], 'expectedInsertions', ARGV[3], 'falseProbability', ARGV[4])
return 1`, []string{j.config}, m, k, n, fpr).Int64()
	mustDo(t, "java tryInit", err)
	return v == 1
}

// params is readConfig: size and hashIterations from the configuration.
func (j *javaBloom) params(t *testing.T) (int64, int) {
	t.Helper()
	v, err := j.rdb.HMGet(t.Context(), j.config, "size", "hashIterations").Result()
	mustDo(t, "java readConfig", err)
	s, _ := v[0].(string)
	h, _ := v[1].(string)
	size, err1 := strconv.ParseInt(s, 10, 64)
	k, err2 := strconv.Atoi(h)
	if err1 != nil || err2 != nil {
		t.Fatalf("java readConfig: size %q, hashIterations %q", s, h)
	}
	return size, k
}

// add is add(Collection): SETBIT of every index; returns how many elements had a bit clear.
func (j *javaBloom) add(t *testing.T, elements ...string) int {
	t.Helper()
	size, k := j.params(t)
	added := 0
	for _, e := range elements {
		clear := false
		for _, i := range javaIndexes(e, size, k) {
			old, err := j.rdb.SetBit(t.Context(), j.name, i, 1).Result()
			mustDo(t, "java SETBIT", err)
			clear = clear || old == 0
		}
		if clear {
			added++
		}
	}
	return added
}

// contains is contains(Object): GETBIT of every index.
func (j *javaBloom) contains(t *testing.T, e string) bool {
	t.Helper()
	size, k := j.params(t)
	for _, i := range javaIndexes(e, size, k) {
		b, err := j.rdb.GetBit(t.Context(), j.name, i).Result()
		mustDo(t, "java GETBIT", err)
		if b == 0 {
			return false
		}
	}
	return true
}

// compatBloomConformance is the suite of the Redisson-compatible BloomFilter, on every topology.
func compatBloomConformance() []conformanceCase {
	return []conformanceCase{
		{"shared with Java both ways", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			java := newJavaBloom(topologyClient(t), name)
			if !java.tryInit(t, 1000, 0.01, "0.01") {
				t.Fatal("java tryInit found a configuration")
			}
			javaElems := []string{"", "x", "日本語", "héllo wörld ☃", strings.Repeat("y", 70)}
			for i := range 50 {
				javaElems = append(javaElems, fmt.Sprint("j", i))
			}
			java.add(t, javaElems...)
			f := newC(redisson.WithRedissonCompat()).BloomFilter(name)
			got, err := f.ContainsMany(ctx, javaElems)
			mustDo(t, "ContainsMany", err)
			for i, ok := range got {
				if !ok {
					t.Fatalf("Java added %q; Go Contains = false", javaElems[i])
				}
			}
			want := redisson.BloomConfig{Insertions: 1000, FalsePositiveRate: 0.01, Bits: 9585, Hashes: 7}
			if cfg, err := f.Config(ctx); err != nil || cfg != want {
				t.Fatalf("Config = %+v, %v; want %+v", cfg, err, want)
			}
			if ok, err := f.TryInit(ctx, 1000, 0.01); ok || err != nil {
				t.Fatalf("TryInit over Java's filter = %v, %v; want false, nil", ok, err)
			}
			var goElems []string
			for i := range 50 {
				goElems = append(goElems, fmt.Sprint("g", i))
			}
			if _, err := f.AddMany(ctx, goElems); err != nil {
				t.Fatal(err)
			}
			for _, e := range goElems {
				if !java.contains(t, e) {
					t.Fatalf("Go added %q; Java's GETBITs of its indices find a clear bit", e)
				}
			}
			// Go's Count is Java's count() over the same bits.
			x, err := java.rdb.BitCount(ctx, name, nil).Result()
			mustDo(t, "BITCOUNT", err)
			wantCount := int64(math.Round(-9585 / 7.0 * math.Log(1-float64(x)/9585)))
			if n, err := f.Count(ctx); err != nil || n != wantCount {
				t.Fatalf("Count = %d, %v; Java's count() = %d", n, err, wantCount)
			}
		}},
		{"Go sizes and writes as Java", func(t *testing.T, newC func(...redisson.Option) *redisson.Client, name string) {
			ctx := t.Context()
			rdb := topologyClient(t)
			for _, tc := range []struct {
				name string
				n    int64
				p    float64
				fpr  string
			}{{name, 1000, 1e-4, "1.0E-4"}, {"{" + name + "}:tagged", 12345, 0.123456789, "0.123456789"}} {
				java := newJavaBloom(rdb, tc.name)
				f := newC(redisson.WithRedissonCompat()).BloomFilter(tc.name)
				if ok, err := f.TryInit(ctx, tc.n, tc.p); !ok || err != nil {
					t.Fatalf("TryInit(%d, %v) = %v, %v", tc.n, tc.p, ok, err)
				}
				m, k := javaSize(tc.n, tc.p)
				want := map[string]string{"size": strconv.FormatInt(m, 10), "hashIterations": strconv.Itoa(k),
					"expectedInsertions": strconv.FormatInt(tc.n, 10), "falseProbability": tc.fpr}
				got, err := rdb.HGetAll(ctx, java.config).Result()
				if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("HGETALL %s = %v, %v; want Java's %v", java.config, got, err, want)
				}
				if java.tryInit(t, tc.n, tc.p, tc.fpr) {
					t.Fatal("java tryInit did not see Go's configuration")
				}
				if ok, err := f.Add(ctx, "a"); !ok || err != nil {
					t.Fatalf("Add = %v, %v", ok, err)
				}
				if typ := rdb.Type(ctx, tc.name).Val(); typ != "string" {
					t.Fatalf("TYPE %s = %s; want string (the bitmap at the name)", tc.name, typ)
				}
				for _, e := range []string{"a", "b", "c", "d"} {
					ok, err := f.Contains(ctx, e)
					mustDo(t, "Contains", err)
					if j := java.contains(t, e); j != ok || e == "a" && !ok {
						t.Fatalf("Contains(%q): Go %v, Java %v", e, ok, j)
					}
				}
				if ok, err := f.Delete(ctx); !ok || err != nil {
					t.Fatalf("Delete = %v, %v", ok, err)
				}
				if n := rdb.Exists(ctx, tc.name, java.config).Val(); n != 0 {
					t.Fatalf("%d of the filter's keys left after Delete", n)
				}
			}
		}},
	}
}

// The hash, sizing, indices, count and number format against the answers of Redisson's own code
// on a JVM (see the top of this file).
func TestRedissonBloomKnownAnswers(t *testing.T) {
	hashes := []struct {
		s      string
		h1, h2 uint64
	}{
		{"", 0xb7aad9c226c6a36b, 0xb2d4e4a63557bca6},
		{"x", 0x06dfc3e30ca52980, 0xa0cd7d235708e8c2},
		{"hello", 0x7fd1d0bcd0c085e1, 0x70f5d2de26f6a7d9},
		{"日本語", 0xe0f2c9c7c28e0985, 0x1c1d5f1b4c37eae2},
		{"héllo wörld ☃", 0xc8edea30a74da634, 0x7ae0ff8c74eaf194},
		{"abcdefghijklmnopqrstu", 0x31c11b21a7bedd0a, 0xf23a9e26cf30bbd8},                      // 21 bytes: ≥ 16
		{"0123456789abcdef0123456789abcdef", 0xd3c86bd01f2269fd, 0xcfa12b16012f2c58},           // one whole packet
		{"0123456789abcdef0123456789abcdef0123456789", 0x45a8c802d926e25e, 0xde33d6ecf19ef723}, // and a remainder
	}
	for _, h := range hashes {
		if h1, h2 := redisson.RedissonBloomHash(h.s); h1 != h.h1 || h2 != h.h2 {
			t.Errorf("hash(%q) = %#016x %#016x; Redisson %#016x %#016x", h.s, h1, h2, h.h1, h.h2)
		}
		if h1, h2 := javaHash(h.s); uint64(h1) != h.h1 || uint64(h2) != h.h2 {
			t.Errorf("the test double's hash(%q) = %#016x %#016x; Redisson %#016x %#016x", h.s, h1, h2, h.h1, h.h2)
		}
	}
	indices := []struct {
		s    string
		want string
	}{{"", "[6677 3567 7896 4786 9115 6005 3097]"}, {"x", "[3052 400 3452 800 3852 1200 4252]"}, {"日本語", "[316 4536 2504 6724 4692 8912 6880]"}}
	for _, c := range indices {
		if got := fmt.Sprint(redisson.RedissonBloomIndices(c.s, 9585, 7)); got != c.want {
			t.Errorf("indices(%q, 9585, 7) = %s; Redisson %s", c.s, got, c.want)
		}
		if got := fmt.Sprint(javaIndexes(c.s, 9585, 7)); got != c.want {
			t.Errorf("the test double's indices(%q, 9585, 7) = %s; Redisson %s", c.s, got, c.want)
		}
	}
	sizes := []struct {
		n    int64
		p    float64
		m    int64
		k    int // 0: refused
		java string
	}{
		{1, 0, 1549, 1074, "0.0"}, {1, 0.5, 1, 1, "0.5"}, {1, 0.01, 9, 6, "0.01"}, {1, 0.9, 0, 0, ""},
		{1000, 0.01, 9585, 7, "0.01"}, {1000, 1e-4, 19170, 13, "1.0E-4"}, {1000, 1e-30, 143775, 100, "1.0E-30"},
		{1000, 1e-300, 1437758, 997, "1.0E-300"}, {1000, 4.9e-324, 1549454, 1074, "4.9E-324"}, {1000, 0.99, 20, 1, "0.99"},
		{12345, 0.123456789, 53749, 3, "0.123456789"}, {1000000, 0.03, 7298440, 5, "0.03"},
		{1000000, 0, 1549454473, 1074, "0.0"}, {55000000, 1e-4, 1054356421, 13, "1.0E-4"},
		{55000000, 1e-30, 0, 0, ""}, {3000000, 0, 0, 0, ""},
	}
	for _, c := range sizes {
		m, k, err := redisson.RedissonBloomSize(c.n, c.p)
		switch {
		case c.k == 0 && !errors.Is(err, redisson.ErrInvalidArgument):
			t.Errorf("size(%d, %v) = %d, %d, %v; Redisson refuses it", c.n, c.p, m, k, err)
		case c.k != 0 && (m != c.m || k != c.k || err != nil):
			t.Errorf("size(%d, %v) = %d, %d, %v; Redisson %d, %d", c.n, c.p, m, k, err, c.m, c.k)
		case c.k != 0 && redisson.JavaDouble(c.p) != c.java:
			t.Errorf("falseProbability %v written %q; Java %q", c.p, redisson.JavaDouble(c.p), c.java)
		}
	}
	for _, c := range []struct {
		x    float64
		java string
	}{{0.002, "0.002"}, {0.3, "0.3"}, {1.0 / 3, "0.3333333333333333"}, {9.999e-4, "9.999E-4"}, {1e-5, "1.0E-5"},
		{math.Copysign(0, -1), "-0.0"}} {
		if got := redisson.JavaDouble(c.x); got != c.java {
			t.Errorf("JavaDouble(%v) = %q; Java %q", c.x, got, c.java)
		}
	}
	for _, c := range []struct{ x, want int64 }{{0, 0}, {1, 0}, {100, 14}, {4000, 740}, {9585, math.MaxInt64}} {
		if got := redisson.RedissonBloomEstimate(9585, 7, c.x); got != c.want {
			t.Errorf("count with %d of 9585 bits (k 7) = %d; Redisson %d", c.x, got, c.want)
		}
	}
}

// The layout: the bits at the name (prefix included), the configuration at Redisson's suffixName,
// tagged or not, and nothing else.
func TestBloomFilterCompatLayout(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t)
	admin := srv.Client(t)
	for _, tc := range []struct{ prefix, name, bits, config string }{
		{"", "seen", "seen", "{seen}:config"},
		{"", "{tag}x", "{tag}x", "{tag}x:config"},
		{"app:", "seen", "app:seen", "{app:seen}:config"},
	} {
		c := newClient(t, srv.Client(t), redisson.WithRedissonCompat(), redisson.WithKeyPrefix(tc.prefix))
		f := c.BloomFilter(tc.name)
		if _, err := f.TryInit(ctx, 100, 0.01); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Add(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		keys, err := dataKeys(ctx, admin)
		mustDo(t, "KEYS", err)
		if fmt.Sprint(keys) != fmt.Sprint([]string{tc.bits, tc.config}) && fmt.Sprint(keys) != fmt.Sprint([]string{tc.config, tc.bits}) {
			t.Fatalf("%q%q: keys %q; want %q and %q", tc.prefix, tc.name, keys, tc.bits, tc.config)
		}
		if a, b := admin.Type(ctx, tc.bits).Val(), admin.Type(ctx, tc.config).Val(); a != "string" || b != "hash" {
			t.Fatalf("types %s, %s; want string, hash", a, b)
		}
		mustDo(t, "FLUSHALL", admin.FlushAll(ctx).Err())
	}
}

// A Client whose parameters are stale (Java deleted the filter and made it again with others) adds
// nothing under them: its add is refused by the script, and it adds again with the new ones, which
// Java then finds; the bitmap holds exactly the new indices. A configuration changed again while it
// adds is ErrConfigMismatch, nothing written.
func TestBloomFilterCompatStaleParamsWriteNothing(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	java := newJavaBloom(admin, "stale")
	java.tryInit(t, 1000, 0.01, "0.01")
	f := c.BloomFilter("stale")
	if _, err := f.Contains(ctx, "warm"); err != nil { // the Client reads and keeps m = 9585, k = 7
		t.Fatal(err)
	}
	mustDo(t, "DEL", admin.Del(ctx, "stale", java.config).Err())
	java.tryInit(t, 500, 0.001, "0.001")
	m, k := javaSize(500, 0.001)
	if ok, err := f.Add(ctx, "e"); !ok || err != nil {
		t.Fatalf("Add with stale parameters = %v, %v; want true, nil (added with the new ones)", ok, err)
	}
	if !java.contains(t, "e") {
		t.Fatal("Java does not find the element Go added after the configuration changed")
	}
	distinct := map[int64]bool{}
	for _, i := range javaIndexes("e", m, k) {
		distinct[i] = true
	}
	if n := admin.BitCount(ctx, "stale", nil).Val(); n != int64(len(distinct)) {
		t.Fatalf("%d bits set; want %d (the element's under the new parameters only)", n, len(distinct))
	}
	// Changed again right after the Client reads the new parameters: the second try is refused too.
	before := admin.Get(ctx, "stale").Val()
	mustDo(t, "DEL", admin.Del(ctx, java.config).Err())
	java.tryInit(t, 1000, 0.01, "0.01")
	redisson.OnBloomLoad(c, func() {
		mustDo(t, "DEL", admin.Del(ctx, java.config).Err())
		java.tryInit(t, 2000, 0.01, "0.01")
	})
	if _, err := f.Add(ctx, "other"); !errors.Is(err, redisson.ErrConfigMismatch) {
		t.Fatalf("Add while the configuration changes twice = %v; want ErrConfigMismatch", err)
	}
	if after := admin.Get(ctx, "stale").Val(); after != before {
		t.Fatal("a refused Add changed the bitmap")
	}
}

// Bad input and foreign values: Redisson's refusals of TryInit (ErrInvalidArgument), another type
// at the name or the configuration key, and configurations Java would not write (ErrWrongType):
// every call refuses them and nothing changes.
func TestBloomFilterCompatRefusals(t *testing.T) {
	ctx := t.Context()
	c, admin, _ := setup(t, redisson.WithRedissonCompat())
	for _, a := range []struct {
		n int64
		p float64
	}{{1, 0.9}, {1000, 1}, {1000, 1.5}, {1000, -0.1}, {1000, math.NaN()}, {0, 0.01}, {-5, 0.01}, {3000000, 0}} {
		if _, err := c.BloomFilter("bad").TryInit(ctx, a.n, a.p); !errors.Is(err, redisson.ErrInvalidArgument) {
			t.Errorf("TryInit(%d, %v) = %v; want ErrInvalidArgument", a.n, a.p, err)
		}
	}
	if ok, err := c.BloomFilter("zero").TryInit(ctx, 1, 0); !ok || err != nil { // Redisson: p = 0 is Double.MIN_VALUE
		t.Fatalf("TryInit(1, 0) = %v, %v", ok, err)
	}
	if v := admin.HGetAll(ctx, "{zero}:config").Val(); v["size"] != "1549" || v["hashIterations"] != "1074" || v["falseProbability"] != "0.0" {
		t.Fatalf("TryInit(1, 0) wrote %v; Redisson writes size 1549, hashIterations 1074, falseProbability 0.0", v)
	}
	mustDo(t, "HSET", admin.HSet(ctx, "locked", "owner", "1").Err()) // a Redisson lock, no configuration
	if _, err := c.BloomFilter("locked").TryInit(ctx, 100, 0.01); !errors.Is(err, redisson.ErrWrongType) {
		t.Errorf("TryInit over a lock = %v; want ErrWrongType", err)
	}
	if n := admin.Exists(ctx, "{locked}:config").Val(); n != 0 {
		t.Error("TryInit over a lock wrote a configuration")
	}
	valid := map[string]string{"size": "9585", "hashIterations": "7", "expectedInsertions": "1000", "falseProbability": "0.01"}
	for _, tc := range []struct {
		what  string
		setup func(name, config string)
	}{
		{"a hash at the name (a Redisson lock) with a configuration", func(name, config string) {
			admin.HSet(ctx, name, "owner", "1")
			hsetWith(ctx, admin, config, valid, "", "")
		}},
		{"a string at the configuration key", func(name, config string) { admin.Set(ctx, config, "x", 0) }},
		{"a foreign hash at the configuration key", func(name, config string) { admin.HSet(ctx, config, "field", "1") }},
		{"falseProbability not Java's", func(name, config string) { hsetWith(ctx, admin, config, valid, "falseProbability", "1e-2") }},
		{"falseProbability 1", func(name, config string) { hsetWith(ctx, admin, config, valid, "falseProbability", "1.0") }},
		{"size 0", func(name, config string) { hsetWith(ctx, admin, config, valid, "size", "0") }},
		{"size past Redisson's limit", func(name, config string) { hsetWith(ctx, admin, config, valid, "size", "4294967295") }},
		{"size not canonical", func(name, config string) { hsetWith(ctx, admin, config, valid, "size", "09585") }},
		{"hashIterations 1075", func(name, config string) { hsetWith(ctx, admin, config, valid, "hashIterations", "1075") }},
		{"expectedInsertions missing", func(name, config string) { hsetWith(ctx, admin, config, valid, "expectedInsertions", "") }},
		{"expectedInsertions past int64", func(name, config string) {
			hsetWith(ctx, admin, config, valid, "expectedInsertions", "9223372036854775808")
		}},
	} {
		name := "w:" + strings.ReplaceAll(tc.what, " ", "-")
		config := "{" + name + "}:config"
		tc.setup(name, config)
		dump := func() string {
			a, _ := admin.Dump(ctx, name).Result()
			b, _ := admin.Dump(ctx, config).Result()
			return a + "|" + b
		}
		before := dump()
		f := c.BloomFilter(name)
		for _, op := range []struct {
			name string
			call func() error
		}{
			{"TryInit", func() error { return errOnly(f.TryInit(ctx, 1000, 0.01)) }},
			{"Add", func() error { return errOnly(f.Add(ctx, "a")) }},
			{"Contains", func() error { return errOnly(f.Contains(ctx, "a")) }},
			{"Count", func() error { return errOnly(f.Count(ctx)) }},
			{"Delete", func() error { return errOnly(f.Delete(ctx)) }},
		} {
			err := op.call()
			if !errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("%s: %s = %v; want ErrWrongType", tc.what, op.name, err)
			}
			if after := dump(); after != before {
				t.Fatalf("%s: %s changed the keys", tc.what, op.name)
			}
		}
	}
}

// hsetWith writes fields with field set to v ("" leaves it out).
func hsetWith(ctx context.Context, rdb *redis.Client, key string, fields map[string]string, field, v string) {
	args := []any{}
	for f, x := range fields {
		if f == field {
			x = v
		}
		if x != "" {
			args = append(args, f, x)
		}
	}
	rdb.HSet(ctx, key, args...)
}

// An add whose highest index a server limit refuses (proto-max-bulk-len 1mb: 8,388,608 bits, with a
// filter of 9,585,058) fails without setting any bit: the script reads that index before it writes.
func TestBloomFilterCompatAddOverProtoLimitWritesNothing(t *testing.T) {
	ctx := t.Context()
	srv := redistest.Start(t, redistest.WithArgs("--proto-max-bulk-len", "1mb"))
	admin := srv.Client(t)
	f := newClient(t, srv.Client(t), redisson.WithRedissonCompat()).BloomFilter("bigbloom")
	if _, err := f.TryInit(ctx, 1000000, 0.01); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := range 100 {
		before, _ := admin.BitCount(ctx, "bigbloom", nil).Result()
		_, err := f.AddMany(ctx, []string{fmt.Sprint("e", i), fmt.Sprint("f", i)})
		after, _ := admin.BitCount(ctx, "bigbloom", nil).Result()
		if err != nil {
			failed++
			if errors.Is(err, redisson.ErrWrongType) {
				t.Errorf("AddMany refused by a server limit = %v: classified as ErrWrongType", err)
			}
			if after != before {
				t.Fatalf("AddMany failed (%v) but set %d bits", err, after-before)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no add reached past the limit: the test checks nothing")
	}
}
