module github.com/adapterkit/adapterkit

go 1.26.0
