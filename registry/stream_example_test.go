package registry_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/adapterkit/adapterkit/examples/blobs/blobsapi"
	"github.com/adapterkit/adapterkit/registry"
)

// A stream each way through the blobs adapter (examples/blobs), whose contract declares
// example.blobs.put with contract.NewUpload and example.blobs.get with
// contract.NewDownload: 10 MiB go up in four chunks, and come back down. adapterDir is
// where the tests built the adapter; a host names its own adapters directory.
func ExampleUpload() {
	ctx := context.Background()
	reg := registry.New(&registry.Config{Dirs: []string{adapterDir}})
	defer reg.Close(ctx)
	h, err := reg.Open(ctx, "blobs", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := registry.NewClient(h, blobsapi.Service)
	if err != nil {
		fmt.Println(err)
		return
	}

	src := strings.NewReader(strings.Repeat("adapterkit", 1<<20))
	d, err := registry.Upload(ctx, c, blobsapi.Put, blobsapi.PutParams{}, src)
	fmt.Println(d.Bytes, d.CRC32C, err)

	st := registry.Download(ctx, c, blobsapi.Get, blobsapi.GetParams{Bytes: 10 << 20, Seed: 1})
	defer st.Close()
	n, err := io.Copy(io.Discard, st)
	fmt.Println(n, err)
	// Output:
	// 10485760 cc546863 <nil>
	// 10485760 <nil>
}
