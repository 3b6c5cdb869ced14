//! The test.streams adapter (fixture.rs, on the stream recipe, recipe.rs) as a program:
//! the Go end-to-end test of the recipes (e2e/sdk_streams_test.go) runs it under the Go
//! host's registry.Upload and registry.Download. `sdk/make.sh build rust` builds it,
//! beside the echo adapter (target/release/examples/streams).

mod fixture;
mod recipe;
mod sha256;

fn main() {
    adapterkit::run(fixture::adapter());
}
