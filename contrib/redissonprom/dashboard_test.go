package redissonprom_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/contrib/redissonprom"
)

// exported returns the names of the series a default Collector exports (a histogram's as
// name_bucket, name_count and name_sum) and the label names of each.
func exported(t *testing.T) map[string]map[string]bool {
	t.Helper()
	col := redissonprom.NewCollector()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	// One event of each kind, so that every event family has a series.
	hook := col.Hook()
	ctx := context.Background()
	for _, e := range []redisson.Event{
		{Kind: redisson.EventAcquired, Object: redisson.ObjectLock, Ctx: ctx, HandedOver: true},
		{Kind: redisson.EventReleased, Object: redisson.ObjectLock, Ctx: ctx},
		{Kind: redisson.EventLost, Object: redisson.ObjectLock, Ctx: ctx},
	} {
		hook(e)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := make(map[string]map[string]bool)
	add := func(name string, labels map[string]bool) { names[name] = labels }
	for _, mf := range mfs {
		labels := map[string]bool{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = true
			}
		}
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			bl := map[string]bool{"le": true}
			for l := range labels {
				bl[l] = true
			}
			add(mf.GetName()+"_bucket", bl)
			add(mf.GetName()+"_count", labels)
			add(mf.GetName()+"_sum", labels)
			continue
		}
		add(mf.GetName(), labels)
	}
	// The Stats families need a watched Client: take them from the descriptions.
	descs := make(chan *prometheus.Desc, 64)
	col.Describe(descs)
	close(descs)
	fq := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	for d := range descs {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read description %s", d)
		}
		if _, ok := names[m[1]]; ok || strings.HasSuffix(m[1], "_seconds") {
			continue
		}
		labels := map[string]bool{}
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels[l] = true
			}
		}
		add(m[1], labels)
	}
	return names
}

// The Grafana dashboard parses, has a Prometheus data source variable that every panel and query
// uses, and its queries use only metrics the Collector exports, with labels those metrics have.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("grafana/redisson.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title      string
		Templating struct {
			List []struct{ Name, Type, Query any }
		}
		Panels []struct {
			Title      string
			Type       string
			Datasource struct{ Type, UID string }
			Targets    []struct {
				Expr       string
				Datasource struct{ Type, UID string }
			}
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana/redisson.json: %v", err)
	}
	hasDS := false
	for _, v := range dash.Templating.List {
		if v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus" {
			hasDS = true
		}
	}
	if !hasDS {
		t.Error("no datasource variable of type prometheus")
	}
	names := exported(t)
	metricRE := regexp.MustCompile(`\bredisson_[a-z_]+`)
	selectorRE := regexp.MustCompile(`(redisson_[a-z_]+)\{([^}]*)\}`)
	byRE := regexp.MustCompile(`by \(([^)]*)\)`)
	matcherRE := regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)`)
	queries := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: data source %q; want ${datasource}", p.Title, p.Datasource.UID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			queries++
			if q.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q: query data source %q; want ${datasource}", p.Title, q.Datasource.UID)
			}
			used := metricRE.FindAllString(q.Expr, -1)
			if len(used) == 0 {
				t.Errorf("panel %q: query %q uses no redisson_ metric", p.Title, q.Expr)
			}
			all := map[string]bool{}
			for _, name := range used {
				labels, ok := names[name]
				if !ok {
					t.Errorf("panel %q: query %q uses %s, which the Collector does not export", p.Title, q.Expr, name)
					continue
				}
				for l := range labels {
					all[l] = true
				}
			}
			for _, s := range selectorRE.FindAllStringSubmatch(q.Expr, -1) {
				for _, m := range matcherRE.FindAllStringSubmatch(s[2], -1) {
					if !names[s[1]][m[1]] {
						t.Errorf("panel %q: query %q selects label %s, which %s does not have", p.Title, q.Expr, m[1], s[1])
					}
				}
			}
			for _, b := range byRE.FindAllStringSubmatch(q.Expr, -1) {
				for _, l := range strings.Split(b[1], ",") {
					if l = strings.TrimSpace(l); !all[l] {
						t.Errorf("panel %q: query %q groups by %s, which its metrics do not have", p.Title, q.Expr, l)
					}
				}
			}
		}
	}
	if queries < 10 {
		t.Errorf("%d queries; want the dashboard's ten or more", queries)
	}
}
