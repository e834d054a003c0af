//! One fan-out: every job pushed (or checked) at once, bounded by `--parallel`, each node's
//! result heard the moment it is in, and all of them back in the order the nodes were named.
//! How it is drawn is the caller's ([`Progress`]): deploy prints nothing itself.

use std::sync::Arc;

use crate::inventory::{Inventory, InventoryError, Node};
use crate::push::{self, Event, Job, NodeResult};
use crate::wire::Declaration;

use super::DeployError;

/// How the caller shows one fan-out as it runs.
pub trait Progress {
    /// Where every step of every node is told, from any thread.
    fn sink(&self) -> Arc<dyn Fn(Event) + Send + Sync>;
    /// Prints a finished node's text (empty: nothing).
    fn print(&self, text: &str);
    /// The fan-out ended.
    fn finish(self: Box<Self>);
}

/// Pushes (or checks) every job over `options.transport`, the caller's (`all` is the
/// inventory's nodes, for jump hosts that are nodes).
/// `progress` draws the nodes sent; `heard` hears every step as it is taken; `finished` hears each
/// node's result the moment it is in, and what it returns is printed then. A node that cannot be
/// reached as said fails alone.
pub fn fan_out(
    all: &[Node],
    jobs: Vec<Job>,
    options: &push::Options,
    progress: impl FnOnce(&[String]) -> Box<dyn Progress>,
    heard: impl Fn(&Event) + Send + Sync + 'static,
    mut finished: impl FnMut(&NodeResult) -> String,
) -> Result<Vec<NodeResult>, DeployError> {
    let order: Vec<String> = jobs.iter().map(|j| j.node.name.clone()).collect();
    let push::transport::Prepared { links, unusable } = options
        .transport
        .prepare(&jobs.iter().map(|j| &j.node).collect::<Vec<_>>(), all)?;
    let jobs: Vec<Job> = jobs
        .into_iter()
        .filter(|j| !unusable.contains_key(&j.node.name))
        .collect();
    let mut results: Vec<NodeResult> = unusable
        .into_iter()
        .map(|(node, e)| NodeResult {
            node,
            result: Err(e),
        })
        .collect();
    let progress = progress(&jobs.iter().map(|j| j.node.name.clone()).collect::<Vec<_>>());
    for r in &results {
        progress.print(&finished(r));
    }
    let sink = progress.sink();
    let events: Arc<dyn Fn(Event) + Send + Sync> = Arc::new(move |event| {
        heard(&event);
        sink(event);
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(DeployError::Runtime)?;
    let pushed = runtime.block_on(push::run(jobs, links, options, events, |r| {
        progress.print(&finished(r))
    }));
    progress.finish();
    results.extend(pushed);
    results.sort_by_key(|r| order.iter().position(|n| *n == r.node));
    Ok(results)
}

/// A node's declaration as it is sent: it says whether the inventory knows the machine has a
/// record, so a machine that lost its whole state directory is refused, not taken for new.
pub fn job(inv: &Inventory, node: Node, declaration: Declaration) -> Result<Job, InventoryError> {
    let expects_record = inv.knows_record(&node)?;
    let planned = Some(inv.planned(&node.name, false)?);
    Ok(Job {
        node,
        declaration: Declaration {
            expects_record,
            planned,
            ..declaration
        },
    })
}
