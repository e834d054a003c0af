//! The `mesh` operator binary: everything is in the library; this only hands over.

/// A plan of a large fleet is mostly small allocations (settings, paths, rendered lines):
/// mimalloc takes them in a fraction of glibc's time (`bench/scale`, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    mesh::cli::run()
}
