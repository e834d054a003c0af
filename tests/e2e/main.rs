//! End-to-end tests: the real `mesh` binary, real SQLite files, and (for `push`) real lab
//! machines over real SSH, checked on the machines themselves.

// a test binary: `pub` marks what the test modules share
#![allow(unreachable_pub)]
// test support code panics on purpose: a failed step is a failed test
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod access;
mod adopt;
mod bastion;
mod bounded;
mod check;
mod cli;
mod confirm;
mod confirm_edges;
mod confirm_pending;
mod confirm_whole;
mod confirmed;
mod container;
mod contracts;
mod corpus;
mod cost;
mod costs_every_cause;
mod deadline;
mod drift;
mod giveback;
mod helper;
mod home;
mod honesty;
mod hostile;
mod inventory_file;
mod inventory_hostile;
mod inventory_removal;
mod key_order;
mod kinds;
mod kinds_symlink;
mod kinds_sysctl;
mod kinds_timer;
mod known_files;
mod lab;
mod manual;
mod nodes;
mod one_machine;
mod openssh;
mod operator_keys;
mod operator_secrets;
mod orphans;
mod partial;
mod paths;
mod placement;
mod provider;
mod provisions;
mod push;
mod push_lock;
mod reaching;
mod ready;
mod rebuilt;
mod record;
mod removal;
mod requirements;
mod resolver;
mod runtime;
mod scheduled;
mod scripting;
mod sealed;
mod secrets;
mod sshd;
mod stop;
mod takeover;
mod upload;
mod util;
mod waves;
