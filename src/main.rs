//! The `mesh` operator binary: everything is in the library; this only hands over.

/// A plan of a large fleet is mostly small allocations (settings, paths, rendered lines):
/// mimalloc takes them in a fraction of glibc's time (`bench/scale`, docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // mimalloc asks for transparent huge pages on its arena; where the kernel grants them on
    // request (`madvise`, as on the host it was measured on) each thread's first allocations
    // fault in 2 MB pages and zero them: about a fifth of a 10-machine no-op push's CPU, and
    // the fan-out's second worker starting its connection tens of milliseconds late. mesh is
    // short-lived and its heaps small; without them it loses nothing (docs/performance.md).
    // Its children inherit the setting (a ProxyCommand, a helper run locally); the lab clears
    // it for its machines.
    let _ = nix::sys::prctl::set_thp_disable(true);
    mesh::cli::run()
}
