//! mesh: an agentless SSH push tool for a small fleet of Linux machines.
//!
//! The layers, in the order a push goes through them:
//! - [`catalogue`]: module definitions (built in, and the operator's folders);
//! - [`inventory`]: the SQLite file of nodes, assignments, settings, pushes and what each
//!   node's helper confirmed it has;
//! - [`resolve`]: inventory + catalogue → one declaration per node;
//! - [`plan`]: a declaration compared with what the node's helper confirmed;
//! - [`ssh`]: one verified, authenticated connection per node;
//! - [`push`]: the helper onto each machine, the declaration through it, the reports back;
//! - [`deploy`]: a rollout of many nodes in waves from what each change costs, with a failure
//!   budget, recorded as it goes so that it can be resumed.
//!
//! [`lab`] boots throwaway machines to push to; [`cli`] is the thin command-line edge.
//!
//! [`wire`], [`ssh`], [`catalogue`] and [`inventory`] are crates of the workspace (`wire/`,
//! `crates/`), re-exported here under their layers' names; the others are modules of this crate.

pub mod cli;
pub mod deploy;
pub mod lab;
pub mod plan;
pub mod push;
pub mod resolve;

pub use mesh_catalogue as catalogue;
pub use mesh_inventory as inventory;
pub use mesh_ssh as ssh;
pub use mesh_wire as wire;

#[cfg(test)]
mod kinds_tests;
#[cfg(test)]
mod layers_tests;
#[cfg(test)]
mod product_words_tests;
#[cfg(test)]
mod size_tests;
