package redisson

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// Who holds a lock: what Inspect tells of a holder beyond its owner id.
//
// Two sources, neither of which costs an acquisition anything:
//   - The owner id itself. Its sequence number is the time it was made (see newID), so a Go
//     holder's id tells when its acquisition began, in both layouts; a Java Redisson owner is
//     "<client UUID>:<thread id>", and a thread id is a small number that no Go id has.
//   - The Client's process record (see WithoutProcessRecord): one small string per Client, not per
//     lock, written by a goroutine of the Client when it first acquires, waits or requests, and
//     refreshed with a TTL, so that it is gone soon after the process is. Inspect reads it beside
//     the snapshot of the name, with one more round trip.
//
// Why not a field per hold: Java Redisson's layouts have no room for one (an RLock's hash is owner
// -> count and nothing else, a Java reader's unlock counts the fields of an RReadWriteLock's hash),
// this package's lock string would grow on every acquisition, and writing anything else per
// acquisition costs a command.

// Process names the process of a Client, as its process record tells (see WithoutProcessRecord).
// Every field is what that process wrote: it is not checked.
type Process struct {
	Host    string    // the host name (os.Hostname), at most 255 bytes
	PID     int       // the process id (os.Getpid)
	Program string    // the program's name: the base name of os.Args[0], at most 255 bytes
	Started time.Time // when the Client was made (New), by that process's clock, to the millisecond
}

// Origin tells which library made an owner id (Holder.Origin).
type Origin string

// The origins Inspect tells apart.
const (
	// OriginGo: this package, in either layout: "<24 hex digits>:<base 36>", or "<UUID>:<decimal>"
	// on a Client made WithRedissonCompat, whose number is a time (see Holder.Since).
	OriginGo Origin = "go"
	// OriginJava: Java Redisson, "<client UUID>:<thread id>": the UUID is the Redisson instance's id
	// (one per RedissonClient, random at its start), the number the id of the Java thread that
	// holds (Thread.getId()).
	OriginJava Origin = "java"
	// OriginUnknown: an owner of neither form (written by something else).
	OriginUnknown Origin = ""
)

// Process records: timing and bounds.
const (
	recordTTL       = 30 * time.Second // a record's TTL: the record of a dead process is gone within it
	recordRefresh   = recordTTL / 3    // how often a live Client rewrites its record
	recordRetry     = time.Second      // the first pause after a failed write; doubling up to recordRefresh
	recordOpTimeout = time.Second      // bounds each write, and Close's delete
	recordFieldMax  = 255              // bytes of the host and program names kept
	recordMax       = 4096             // a longer value is not read as a record
	maxRecordReads  = 32               // the records one Inspect reads at most (distinct Clients)
)

// seqShift: an owner id's sequence number is a Unix time in ms shifted left by seqShift (see
// newID). It leaves 2^20 ids per millisecond, and numbers below 2^63 (a Java long: the
// "<UUID>:<long>" form of an owner id holds) until the year 2248.
const seqShift = 20

// seqEpoch is the earliest time an owner id of this package tells (2020-01-01, Unix ms): a smaller
// number is no time, as a Java thread id is not, nor the counters of earlier versions' ids.
const seqEpoch = 1577836800000

// recordValue is the JSON form of a process record.
type recordValue struct {
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Program string `json:"prog"`
	Started int64  `json:"started"` // Unix ms
}

// clip cuts s to at most recordFieldMax bytes, on a character boundary.
func clip(s string) string {
	if len(s) <= recordFieldMax {
		return s
	}
	i := recordFieldMax
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// thisProcess returns what this process's records say of it, for a Client made at started.
func thisProcess(started time.Time) recordValue {
	host, _ := os.Hostname()
	prog := ""
	if len(os.Args) > 0 {
		prog = filepath.Base(os.Args[0])
	}
	return recordValue{Host: clip(host), PID: os.Getpid(), Program: clip(prog), Started: started.UnixMilli()}
}

// startRecord starts the goroutine that keeps the Client's process record (keepRecord), unless
// WithoutProcessRecord or the Client is closed. newID calls it once.
func (c *Client) startRecord() {
	if c.cfg.noRecord {
		return
	}
	c.background(c.keepRecord)
}

// keepRecord writes the Client's process record every recordRefresh (after a failure: after
// recordRetry, doubling), until stop is closed, then deletes it. It never fails a call: a failure
// is logged once until a write succeeds again. Each command waits at most recordOpTimeout, on a
// context of its own, so that a write still under way when the Client closes is answered before
// the delete is sent.
func (c *Client) keepRecord(stop <-chan struct{}) {
	key := processRecordKey(c.cfg.prefix, c.id)
	b, _ := json.Marshal(thisProcess(c.started))
	val := string(b)
	t := time.NewTimer(0)
	defer t.Stop()
	pause, failing, up := recordRetry, false, false
	for {
		select {
		case <-stop:
			ctx, cancel := context.WithTimeout(context.Background(), recordOpTimeout)
			err := c.rdb.Del(ctx, key).Err()
			cancel()
			if err != nil {
				c.cfg.logger.Debug("redisson: could not delete the process record; it expires on its own", "key", key, "err", err)
			}
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), recordOpTimeout)
		err := c.rdb.SetEx(ctx, key, val, recordTTL).Err()
		cancel()
		switch {
		case err != nil:
			if !failing {
				c.cfg.logger.Warn("redisson: could not write the process record (Inspect does not name this process meanwhile); retrying",
					"key", key, "err", err)
			}
			failing = true
			t.Reset(pause)
			pause = min(2*pause, recordRefresh)
			continue
		case failing:
			c.cfg.logger.Info("redisson: the process record is written again", "key", key)
		}
		failing, pause = false, recordRetry
		if !up {
			up = true
			close(c.recordUp)
		}
		t.Reset(recordRefresh)
	}
}

// Owner id forms (see newID and newClientID; Java Redisson's is the compat one).
var (
	goOwner   = regexp.MustCompile(`^([0-9a-f]{24}):([0-9a-z]{1,13})$`)
	uuidOwner = regexp.MustCompile(`^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):([0-9]{1,20})$`)
)

// ownerID is what an owner id tells by itself.
type ownerID struct {
	client string
	origin Origin
	since  int64 // Unix ms when a Go owner's acquisition began; 0 unknown
	thread int64 // a Java owner's thread id
}

// parseOwner decodes owner: a Go id whose number is a time no later than a day after nowMs (server
// ms) tells since; a "<UUID>:<decimal>" whose number is no such time is Java's (or an earlier
// version's Go id in compat mode, which reads the same).
func parseOwner(owner string, nowMs int64) ownerID {
	mintedAt := func(seq uint64) int64 {
		ms := seq >> seqShift
		if ms < seqEpoch || ms > uint64(nowMs)+uint64(24*time.Hour/time.Millisecond) {
			return 0
		}
		return int64(ms)
	}
	if m := goOwner.FindStringSubmatch(owner); m != nil {
		seq, err := strconv.ParseUint(m[2], 36, 64)
		if err != nil {
			return ownerID{}
		}
		return ownerID{client: m[1], origin: OriginGo, since: mintedAt(seq)}
	}
	if m := uuidOwner.FindStringSubmatch(owner); m != nil {
		seq, err := strconv.ParseUint(m[2], 10, 64)
		if err != nil {
			return ownerID{}
		}
		if since := mintedAt(seq); since != 0 {
			return ownerID{client: m[1], origin: OriginGo, since: since}
		}
		id := ownerID{client: m[1], origin: OriginJava}
		if seq <= math.MaxInt64 {
			id.thread = int64(seq)
		}
		return id
	}
	return ownerID{}
}

// describeHolders fills in what the holders' owner ids tell (Client, Origin, Since, Age, ThreadID),
// with nowMs the server's clock at the snapshot, then their processes from the records of their
// Clients (see processes).
func (c *Client) describeHolders(ctx context.Context, in *Inspection, nowMs int64) {
	var clients []string
	seen := map[string]bool{}
	for i := range in.Holders {
		h := &in.Holders[i]
		id := parseOwner(h.Owner, nowMs)
		h.Client, h.Origin, h.ThreadID = id.client, id.origin, id.thread
		if id.since != 0 {
			h.Since = time.UnixMilli(id.since)
			h.Age = msDur(max(nowMs-id.since, 0))
		}
		if id.origin == OriginGo && !seen[id.client] && len(clients) < maxRecordReads {
			seen[id.client] = true
			clients = append(clients, id.client)
		}
	}
	procs := c.processes(ctx, clients)
	for i := range in.Holders {
		h := &in.Holders[i]
		if p, ok := procs[h.Client]; ok && h.Origin == OriginGo {
			h.Process = p
		}
	}
}

// processes reads the process records of the Clients whose ids are given, in one round trip
// (one per record when the go-redis client may read from replicas: a transaction, which keeps the
// read on the master, takes keys of one slot). A record missing, unreadable or not read in time is
// left out: Inspect reports what it could read.
func (c *Client) processes(ctx context.Context, clients []string) map[string]*Process {
	if len(clients) == 0 {
		return nil
	}
	cmds := make([]*redis.StringCmd, len(clients))
	keys := make([]string, len(clients))
	for i, id := range clients {
		keys[i] = processRecordKey(c.cfg.prefix, id)
	}
	if c.replicaReads {
		var wg sync.WaitGroup
		for i := range keys {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.read(ctx, keys[i], func(p redis.Pipeliner) { cmds[i] = p.Get(ctx, keys[i]) })
			}()
		}
		wg.Wait()
	} else {
		_ = c.read(ctx, keys[0], func(p redis.Pipeliner) {
			for i := range keys {
				cmds[i] = p.Get(ctx, keys[i])
			}
		})
	}
	out := map[string]*Process{}
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		if p, err := decodeRecord(cmd.Val()); cmd.Err() == nil && err == nil {
			out[clients[i]] = p
		}
	}
	return out
}

// decodeRecord decodes a process record, whoever wrote it: bounded in size, fields cut as the
// writer cuts them.
func decodeRecord(s string) (*Process, error) {
	if len(s) > recordMax {
		return nil, errors.New("redisson: process record too long")
	}
	var v recordValue
	d := json.NewDecoder(strings.NewReader(s))
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	p := &Process{Host: clip(v.Host), PID: v.PID, Program: clip(v.Program)}
	if v.Started > 0 {
		p.Started = time.UnixMilli(v.Started)
	}
	return p, nil
}
