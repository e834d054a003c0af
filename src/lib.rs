//! mesh: an agentless SSH push tool for a small fleet of Linux machines.
//!
//! The layers, in the order a push goes through them:
//! - [`catalogue`]: module definitions (built in, and the operator's folders);
//! - [`inventory`]: the SQLite file of nodes, assignments, settings, pushes and what each
//!   node's helper confirmed it has;
//! - [`resolve`]: inventory + catalogue → one declaration per node;
//! - [`plan`]: a declaration compared with what the node's helper confirmed;
//! - [`ssh`]: one verified, authenticated connection per node;
//! - [`push`]: the helper onto each machine, the declaration through it, the reports back.
//!
//! [`lab`] boots throwaway machines to push to; [`cli`] is the thin command-line edge.

pub mod catalogue;
pub mod cli;
pub mod inventory;
pub mod lab;
pub mod plan;
pub mod push;
pub mod resolve;
pub mod ssh;

pub use mesh_wire as wire;
