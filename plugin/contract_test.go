package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

type stockParams struct {
	SKU string `json:"sku"`
	Qty int64  `json:"qty"`
}

type stockResult struct {
	Left uint8 `json:"left"`
}

var (
	stock    = contract.NewService("test.stock", 1)
	reserve  = contract.NewMethod[stockParams, stockResult](stock, "reserve")
	other    = contract.NewService("test.other", 1)
	otherGet = contract.NewMethod[struct{}, struct{}](other, "get")
)

func reserveHandler(_ context.Context, p stockParams) (stockResult, error) {
	return stockResult{Left: uint8(100 - p.Qty)}, nil
}

// A service implementing a contract is served; params are decoded by package codec and
// a params mistake is answered invalid with one line naming the field.
func TestImplement(t *testing.T) {
	s := plugin.ServiceOf(stock)
	plugin.Implement(s, reserve, reserveHandler)
	h := serve(t, &plugin.Adapter{Services: []*plugin.Service{s}})
	h.initialize()
	expectResult(t, h.call("test.stock.reserve", `{"sku":"a","qty":3}`), h.nextID, `{"left":97}`)
	for params, want := range map[string]string{
		`{"sku":"a","warehouse":"w"}`: `params: field "warehouse" is not known (known: sku, qty)`,
		`{"qty":9223372036854775808}`: `params: field "qty": 9223372036854775808 does not fit int64`,
		`{"qty":"3"}`:                 `params: field "qty": expected an integer, got a string`,
	} {
		m := h.call("test.stock.reserve", params)
		if m.Type != proto.TypeError || m.Code != wire.CodeInvalid || m.Message != want {
			t.Errorf("%s: got %s %s %q, want invalid %q", params, m.Type, m.Code, m.Message, want)
		}
	}
}

// R19-R25 and the contract: a missing handler, a method of another contract, or a
// service not made from a contract are refused before anything is served.
func TestImplementMistakes(t *testing.T) {
	missing := plugin.ServiceOf(stock)
	foreign := plugin.ServiceOf(stock)
	plugin.Implement(foreign, reserve, reserveHandler)
	plugin.Implement(foreign, otherGet, func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
	plain := plugin.NewService("test.stock", 1)
	plugin.Implement(plain, reserve, reserveHandler)
	// A second Service value with the same id and version is another service.
	twin := plugin.ServiceOf(contract.NewService("test.stock", 1))
	plugin.Implement(twin, reserve, reserveHandler)
	for name, c := range map[string]struct {
		s    *plugin.Service
		want string
	}{
		"missing": {missing, "test.stock.reserve"},
		"foreign": {foreign, "test.other.get"},
		"plain":   {plain, "test.stock"},
		"twin":    {twin, "two distinct contract.Service values declared with the same id and version"},
	} {
		_, err := (&plugin.Adapter{Services: []*plugin.Service{c.s}}).Catalog()
		if !errors.Is(err, plugin.ErrInvalidAdapter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A params or result type that cannot come back as the same value is refused when the
// method is declared, naming the method, the field and the type: through the contract
// (Implement) and through Handle alike; nothing is served.
func TestUnsendableTypes(t *testing.T) {
	type withChan struct {
		Done chan struct{} `json:"done"`
	}
	type withReader struct {
		In struct {
			Src interface{ Read([]byte) (int, error) } `json:"src"`
		} `json:"in"`
	}
	// A contract method is refused where it is declared (contract.NewMethod panics);
	// a handler registered without a contract, when the adapter's catalog is built.
	svc := contract.NewService("test.bad", 1)
	wantContract := `contract: invalid service description: method "test.bad.get" params: field "done": chan struct {} cannot be sent`
	func() {
		defer func() {
			err, _ := recover().(error)
			if !errors.Is(err, contract.ErrInvalid) || err.Error() != wantContract {
				t.Errorf("NewMethod panicked with %v, want %s", err, wantContract)
			}
		}()
		contract.NewMethod[withChan, struct{}](svc, "get")
	}()
	plain := plugin.NewService("test.bad", 1)
	plugin.Handle(plain, "test.bad.get", func(context.Context, struct{}) (withReader, error) { return withReader{}, nil })
	want := `plugin: invalid adapter: service test.bad: method "test.bad.get" result: field "in.src": interface { Read([]uint8) (int, error) } cannot be received: only an empty interface can be filled`
	_, err := (&plugin.Adapter{Services: []*plugin.Service{plain}}).Catalog()
	if !errors.Is(err, plugin.ErrInvalidAdapter) || err.Error() != want {
		t.Errorf("Catalog() = %v\nwant %s", err, want)
	}
}
