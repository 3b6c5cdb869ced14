package promcollector

// The collector's labels and buckets, for the black-box tests of this package.
var (
	OtherMethod    = otherMethod
	Buckets        = buckets
	CatalogMethods = catalogMethods
)
