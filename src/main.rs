//! The `mesh` operator binary: everything is in the library; this only hands over.

fn main() -> std::process::ExitCode {
    mesh::cli::run()
}
