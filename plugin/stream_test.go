package plugin_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/adapterkit/adapterkit/contract"
	"github.com/adapterkit/adapterkit/plugin"
)

// Stream methods are implemented as a contract's methods are: a stream method of
// another contract, or a nil handler, is refused before anything is served; each of a
// contract's stream methods is in the catalog, and one without a handler is missing.
func TestImplementStreamMistakes(t *testing.T) {
	files := contract.NewService("test.files", 1)
	put := contract.NewUpload[struct{}, int64](files, "put")
	get := contract.NewDownload[struct{}](files, "get")
	other := contract.NewService("test.other", 1)
	otherPut := contract.NewUpload[struct{}, int64](other, "put")
	upload := func(context.Context, struct{}, io.Reader) (int64, error) { return 0, nil }
	download := func(context.Context, struct{}, io.Writer) error { return nil }

	good := plugin.ServiceOf(files)
	plugin.ImplementUpload(good, put, upload)
	plugin.ImplementDownload(good, get, download)
	cat, err := (&plugin.Adapter{Services: []*plugin.Service{good}}).Catalog()
	if err != nil || strings.Join(cat.Services[0].Methods, " ") != "test.files.put test.files.get" {
		t.Fatalf("catalog %+v, %v", cat, err)
	}

	missing := plugin.ServiceOf(files)
	plugin.ImplementUpload(missing, put, upload)
	foreign := plugin.ServiceOf(files)
	plugin.ImplementUpload(foreign, put, upload)
	plugin.ImplementDownload(foreign, get, download)
	plugin.ImplementUpload(foreign, otherPut, upload)
	nilHandler := plugin.ServiceOf(files)
	plugin.ImplementUpload(nilHandler, put, upload)
	plugin.ImplementDownload(nilHandler, get, nil)
	for name, c := range map[string]struct {
		s    *plugin.Service
		want string
	}{
		"missing": {missing, "test.files.get"},
		"foreign": {foreign, `method "test.other.put" is not a method of the contract of service "test.files"`},
		"nil":     {nilHandler, "nil handler"},
	} {
		_, err := (&plugin.Adapter{Services: []*plugin.Service{c.s}}).Catalog()
		if !errors.Is(err, plugin.ErrInvalidAdapter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
