package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// chartTestReport is a fixed report with every kind of result the charts show, with the
// implementations and data object rows of a default run (so the longest legend and row labels).
func chartTestReport() *report {
	rep := &report{Config: map[string]string{"critical": "1ms", "contended_duration": "4s", "rounds": "2"}}
	impls := []struct {
		name       string
		ops, p99   float64
		cmds       float64
		cmdsGrowth float64
	}{
		{"redisson", 650, 25, 9.2, 1.02},
		{"redisson-fair", 630, 27, 9.3, 1.02},
		{"redisson-spin", 640, 500, 9, 1.1},
		{"mutex", 800, 24, 0, 1},
		{"redsync", 660, 490, 4.5, 1.1},
		{"redislock", 500, 157, 50, 2},
		{"rueidislock", 400, 335, 64, 1.8},
		{"rueidislock-km1", 410, 300, 30, 1.5},
		{"bare", 640, 22, 7, 1.02},
		{"floor", 550, 133, 19, 1.8},
	}
	for _, im := range impls {
		rep.Contended = append(rep.Contended, &scenarioResult{Scenario: "contended", Impl: im.name, Goroutines: 16, Acquisitions: 1000, OpsPerSec: im.ops})
		for i, n := range []int{1, 4, 16, 64} {
			f := float64(i)
			r := &scenarioResult{Scenario: "contended-" + strconv.Itoa(n) + "c", Impl: im.name, Goroutines: n, Acquisitions: 1000,
				OpsPerSec: im.ops * (1 - 0.05*f), WaitP99Ms: im.p99 * (f + 0.01), CmdsPerAcqAll: im.cmds * (1 + (im.cmdsGrowth-1)*f)}
			if im.name == "redislock" && n == 4 {
				continue // a scenario an implementation did not complete
			}
			rep.Contended = append(rep.Contended, r)
		}
	}
	rep.Obj = &objResult{Rows: []objRow{
		{Op: "AtomicLong.Add", Goroutines: 1, Batch: 1, Ours: 9000, Raw: 9100, Ratio: 0.99, RawCmds: "INCRBY"},
		{Op: "AtomicLong.Add", Goroutines: 16, Batch: 1, Ours: 30000, Raw: 32000, Ratio: 0.94, RawCmds: "INCRBY"},
		{Op: "BloomFilter.AddMany", Goroutines: 16, Batch: 1, Ours: 20000, Raw: 21000, Ratio: 0.94, RawCmds: "pipeline of 7 SETBIT"},
		{Op: "BloomFilter.ContainsMany", Goroutines: 16, Batch: 1, Ours: 20000, Raw: 21500, Ratio: 0.92, RawCmds: "pipeline of 7 GETBIT"},
		{Op: "BloomFilter.AddMany", Goroutines: 4, Batch: 1000, Ours: 160000, Raw: 110000, Ratio: 1.45, RawCmds: "pipeline of 7000 SETBIT"},
		{Op: "BloomFilter.ContainsMany", Goroutines: 4, Batch: 1000, Ours: 170000, Raw: 115000, Ratio: 1.48, RawCmds: "pipeline of 7000 GETBIT"},
	}}
	return rep
}

// checkSVG fails unless path is a non-empty, well-formed XML document whose root is <svg>.
func checkSVG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() == 0 {
		t.Fatalf("%s: empty or unreadable (%v)", path, err)
	}
	d := xml.NewDecoder(f)
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
}

func TestWriteChartsWritesEverySVG(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts") // created by writeCharts
	files, err := writeCharts(dir, chartTestReport())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{chartThroughput, chartWaitP99, chartCommands, chartObjects}
	var got []string
	for _, f := range files {
		got = append(got, filepath.Base(f))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	for _, name := range want {
		checkSVG(t, filepath.Join(dir, name))
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("font-family:"+chartFontFamily+";")) || bytes.Contains(b, []byte("font-family:DejaVu Sans;")) {
			t.Errorf("%s: not every text in the font families %s", name, chartFontFamily)
		}
	}
}

func TestWriteChartsSkipsWhatWasNotMeasured(t *testing.T) {
	dir := t.TempDir()
	rep := chartTestReport()
	rep.Contended = nil
	files, err := writeCharts(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || filepath.Base(files[0]) != chartObjects {
		t.Fatalf("files %v, want only %s", files, chartObjects)
	}
	checkSVG(t, files[0])
	files, err = writeCharts(dir, &report{})
	if err != nil || len(files) != 0 {
		t.Fatalf("empty report: files %v, err %v; want none", files, err)
	}
}
