package prommetrics

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/adapterkit/adapterkit/wire"
)

// restarting plays an adapter that restarts with a new catalog before every scrape:
// round r advertises catalogSize methods of its own plus one name of longName bytes,
// and its figures have calls to the first calledPerRound of them and to the long one.
// Every third round it is caught restarting (no catalog known).
type restarting struct {
	round                                int
	catalogSize, calledPerRound, longLen int
}

func (r *restarting) snapshot() Snapshot {
	r.round++
	methods := make(map[string]bool, r.catalogSize+1)
	var st Figures
	long := fmt.Sprintf("r%d.", r.round) + strings.Repeat("x", r.longLen)
	methods[long] = true
	st.Methods = append(st.Methods, MethodFigures{Method: long, Calls: 1})
	for i := range r.catalogSize {
		m := fmt.Sprintf("round%d.method%05d", r.round, i)
		methods[m] = true
		if i < r.calledPerRound {
			st.Methods = append(st.Methods, MethodFigures{Method: m, Calls: 3,
				Errors: map[wire.Code]uint64{wire.CodeFailed: 1}})
		}
	}
	a := Adapter{Name: "churn", Version: "1.0.0", Up: true, Methods: methods, Figures: st}
	if r.round%3 == 0 {
		a.Up, a.Methods = false, nil
	}
	return Snapshot{Adapters: []Adapter{a}}
}

func heapAfterGC() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// An adapter restarting with ever new catalogs (each with 20,000 methods and one
// 64 KiB name) does not make the collector grow: after 40 scrapes it remembers only
// the labels of the last catalog, at most MaxMethodLabels of at most MaxLabelLen
// bytes, every scrape reports at most MaxMethodLabels+1 method labels, and the heap
// after the last scrape is within 2 MiB of the heap after the fourth (a collector
// that kept every catalog's methods would hold over 30 MB).
func TestCollectorForgetsOldCatalogs(t *testing.T) {
	r := &restarting{catalogSize: 20_000, calledPerRound: 300, longLen: 64 << 10}
	c := New(r.snapshot)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	var base uint64
	for round := 1; round <= 40; round++ {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		methods := map[string]bool{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				if v := labelValue(m, "method"); v != "" {
					methods[v] = true
				}
			}
		}
		if len(methods) > MaxMethodLabels+1 {
			t.Fatalf("scrape %d: %d method labels", round, len(methods))
		}
		for m := range methods {
			if len(m) > MaxLabelLen {
				t.Fatalf("scrape %d: a method label of %d bytes", round, len(m))
			}
			if m != OtherMethod && !strings.HasPrefix(m, fmt.Sprintf("round%d.", lastCatalogRound(round))) {
				t.Fatalf("scrape %d: label %q of an earlier catalog", round, m)
			}
		}
		if round == 4 {
			base = heapAfterGC()
		}
	}
	grown := int64(heapAfterGC()) - int64(base)
	if grown > 2<<20 {
		t.Errorf("heap grew by %d bytes over 36 scrapes of new catalogs", grown)
	}
	t.Logf("heap after the 40th scrape - after the 4th: %d bytes; labels remembered: %d", grown, len(c.labels["churn"]))
}

// lastCatalogRound is the round whose catalog labels scrape round: its own, or the
// one before while the adapter restarts.
func lastCatalogRound(round int) int {
	if round%3 == 0 {
		return round - 1
	}
	return round
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// The labels of an adapter no longer reported are forgotten; methods called that the
// current catalog does not advertise (any more) are "(other)"; while no catalog is
// known the last labels stay; beyond MaxMethodLabels, calls go to "(other)".
func TestCollectorMethodLabels(t *testing.T) {
	var snap Snapshot
	c := New(func() Snapshot { return snap })
	stats := func(methods ...string) Figures {
		var st Figures
		for _, m := range methods {
			st.Methods = append(st.Methods, MethodFigures{Method: m, Calls: 1})
		}
		return st
	}
	scrape := func() map[string]float64 {
		reg := prometheus.NewRegistry()
		reg.MustRegister(c)
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range fams {
			if f.GetName() != "adapterkit_calls_total" {
				continue
			}
			for _, m := range f.GetMetric() {
				if labelValue(m, "code") == codeOK {
					out[labelValue(m, "adapter")+" "+labelValue(m, "method")] += m.GetCounter().GetValue()
				}
			}
		}
		return out
	}
	snap.Adapters = []Adapter{
		{Name: "a", Methods: map[string]bool{"x.one": true, "x.two": true}, Figures: stats("x.one", "x.two", "invented")},
		{Name: "b", Methods: map[string]bool{"y.one": true}, Figures: stats("y.one")},
	}
	if got := scrape(); got["a x.one"] != 1 || got["a x.two"] != 1 || got["a (other)"] != 1 || got["b y.one"] != 1 {
		t.Fatalf("first scrape: %v", got)
	}
	// a restarts (no catalog), then comes back without x.two; b is closed.
	snap.Adapters = []Adapter{{Name: "a", Figures: stats("x.one", "x.two", "invented")}}
	if got := scrape(); got["a x.one"] != 1 || got["a x.two"] != 1 || got["a (other)"] != 1 {
		t.Fatalf("while restarting: %v", got)
	}
	if _, ok := c.labels["b"]; ok {
		t.Error("labels of b, no longer reported, are kept")
	}
	snap.Adapters[0].Methods = map[string]bool{"x.one": true}
	if got := scrape(); got["a x.one"] != 1 || got["a x.two"] != 0 || got["a (other)"] != 2 {
		t.Fatalf("after the catalog changed: %v", got)
	}
	many := map[string]bool{}
	var called []string
	for i := range MaxMethodLabels + 10 {
		m := fmt.Sprintf("m%04d", i)
		many[m] = true
		called = append(called, m)
	}
	snap.Adapters = []Adapter{{Name: "a", Methods: many, Figures: stats(called...)}}
	got := scrape()
	if len(got) != MaxMethodLabels+1 || got["a (other)"] != 10 || got["a m0000"] != 1 || got[fmt.Sprintf("a m%04d", MaxMethodLabels)] != 0 {
		t.Fatalf("beyond the cap: %d labels, (other) %v", len(got), got["a (other)"])
	}
	if n := len(c.labels["a"]); n != MaxMethodLabels {
		t.Errorf("%d labels remembered", n)
	}
}
