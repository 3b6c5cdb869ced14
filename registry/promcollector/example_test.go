package promcollector_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/registry/promcollector"
)

// A host registers the collector of its registry in its own Prometheus registry and
// serves it; each scrape reads the adapters' figures as they are then.
func Example() {
	reg := registry.New(&registry.Config{Dirs: []string{built}})
	defer reg.Close(context.Background())
	h, err := reg.Open(context.Background(), "echo", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = h.Call(context.Background(), "example.echo.echo", []byte(`{}`))

	metrics := prometheus.NewRegistry()
	metrics.MustRegister(promcollector.ForRegistry(reg))
	srv := httptest.NewServer(promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, `adapterkit_calls_total{adapter="echo",code="ok"`) ||
			strings.HasPrefix(line, "adapterkit_adapter_up{") {
			fmt.Println(line)
		}
	}
	// Output:
	// adapterkit_adapter_up{adapter="echo",version="1.2.0"} 1
	// adapterkit_calls_total{adapter="echo",code="ok",method="example.echo.echo"} 1
}
