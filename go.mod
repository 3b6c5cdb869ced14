module github.com/adapterkit/adapterkit

go 1.26.0

require github.com/hashicorp/go-version v1.9.0
