//! What each node's change costs, read from its plan, and the waves a rollout of them takes.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::inventory::{Assignment, Inventory, InventoryError, Node};
use crate::plan::Plan;
use crate::resolve::{self, Composed};
use crate::wire::{Cost, Declaration, ProcessSpec, ServiceSpec};

use super::waves::{NodeCost, Wave, group};
use super::{DeployError, MaxUnavailable, Options};

/// What `plan` (of `declaration`, against what the node confirmed: `confirmed`) costs: the
/// modules whose units it restarts or stops. A unit started for the first time restarts
/// nothing that was serving.
pub fn node_cost(
    inventory: &Inventory,
    plan: &Plan,
    declaration: &Declaration,
    confirmed: Option<&Declaration>,
) -> Result<NodeCost, InventoryError> {
    let assignments = inventory.assignments(Some(&plan.node))?;
    Ok(node_cost_of(&assignments, plan, declaration, confirmed))
}

/// As [`node_cost`], with the node's assignments as composing it read them
/// ([`resolve::Resolved::assignments`]): not read again.
pub fn node_cost_of(
    assignments: &[Assignment],
    plan: &Plan,
    declaration: &Declaration,
    confirmed: Option<&Declaration>,
) -> NodeCost {
    let modules: BTreeMap<&str, &str> = assignments
        .iter()
        .map(|a| (a.instance.as_str(), a.module.as_str()))
        .collect();
    let resources = || {
        declaration
            .resources
            .iter()
            .chain(confirmed.into_iter().flat_map(|d| d.resources.iter()))
    };
    let instance_of = |id: &str| resources().find(|r| r.id == id).map(|r| r.instance.clone());
    // the assignment that declares the unit (a service or a process of it): its module's budget
    // is the one a restart spends, whichever module's change causes it
    let owner_of = |unit: &str| {
        resources()
            .find(|r| {
                r.spec.get::<ServiceSpec>().is_some_and(|s| s.unit == unit)
                    || r.spec.get::<ProcessSpec>().is_some_and(|p| p.unit == unit)
            })
            .map(|r| r.instance.clone())
    };
    let mut restarts = BTreeSet::new();
    for unit in &plan.units {
        if unit.verb == "start" || !(unit.action == Cost::Restart || unit.stops) {
            continue;
        }
        if let Some(module) = owner_of(&unit.unit).and_then(|i| modules.get(i.as_str())) {
            restarts.insert((*module).to_string());
            continue;
        }
        // a cause reads `ID` or `ID: settings that moved`
        for because in &unit.because {
            let id = because
                .split_once(": ")
                .map_or(because.as_str(), |(id, _)| id);
            if let Some(module) = instance_of(id).and_then(|i| modules.get(i.as_str())) {
                restarts.insert((*module).to_string());
            }
        }
    }
    NodeCost {
        node: plan.node.clone(),
        changes: !plan.changes.is_empty(),
        restarts: restarts.into_iter().collect(),
    }
}

/// At most how many of each module's assignments may restart at once: `--max-unavailable`,
/// else its module.json's `"rollout"`, else one for a module that provides a requirement (its
/// consumers lose it while it restarts) and no limit otherwise.
pub fn limits(
    inventory: &Inventory,
    catalogue: &Catalogue,
    modules: &BTreeSet<String>,
    max_unavailable: Option<MaxUnavailable>,
) -> Result<BTreeMap<String, usize>, InventoryError> {
    // every assignment of the mesh, read only once a module has a limit to count against: a
    // plan that restarts nothing (or nothing limited) never reads the whole table
    let mut all = None;
    let mut out = BTreeMap::new();
    for m in modules {
        let module = catalogue.module(m).ok();
        let limit = max_unavailable
            .or_else(|| module.and_then(|d| d.rollout.max_unavailable))
            .or_else(|| {
                module
                    .is_some_and(|d| !d.provides.is_empty())
                    .then_some(MaxUnavailable::Count(1))
            });
        if let Some(limit) = limit {
            if all.is_none() {
                all = Some(inventory.assignments(None)?);
            }
            let assigned = all.iter().flatten().filter(|a| a.module == *m).count();
            out.insert(m.clone(), limit.of(assigned));
        }
    }
    Ok(out)
}

/// The waves a rollout of `costs` takes: providers before their consumers (as
/// [`resolve::order::waves`]), each provider layer grouped by [`group`].
pub fn waves(
    inventory: &Inventory,
    catalogue: &Catalogue,
    costs: Vec<(Node, NodeCost)>,
    options: &Options,
) -> Result<Vec<Wave>, DeployError> {
    let costs = costs.into_iter().map(|(n, c)| (n, c, None)).collect();
    waves_of(inventory, catalogue, costs, options)
}

/// As [`waves`], each node with its assignments' providers where composing it resolved them
/// ([`resolve::Resolved::providers`]): not resolved again.
pub fn waves_of(
    inventory: &Inventory,
    catalogue: &Catalogue,
    costs: Vec<(Node, NodeCost, Option<resolve::order::Providers>)>,
    options: &Options,
) -> Result<Vec<Wave>, DeployError> {
    let modules: BTreeSet<String> = costs
        .iter()
        .flat_map(|(_, c, _)| c.restarts.iter().cloned())
        .collect();
    let limits = limits(inventory, catalogue, &modules, options.max_unavailable)?;
    let mut nodes = Vec::with_capacity(costs.len());
    let mut by_name: BTreeMap<String, NodeCost> = BTreeMap::new();
    for (n, c, providers) in costs {
        by_name.insert(n.name.clone(), c);
        nodes.push((n, providers));
    }
    let layers = resolve::order::waves_of(inventory, catalogue, nodes)?;
    let layers: Vec<Vec<NodeCost>> = layers
        .into_iter()
        .map(|l| {
            l.into_iter()
                .filter_map(|n| by_name.remove(&n.name))
                .collect()
        })
        .collect();
    Ok(group(layers, options.canary, &limits))
}

/// The waves a push of `composed` takes, each node's cost read from its plan.
pub fn plan_waves(
    inventory: &Inventory,
    catalogue: &Catalogue,
    composed: &[(Node, Composed)],
    options: &Options,
) -> Result<Vec<Wave>, DeployError> {
    let mut costs = Vec::new();
    for (node, c) in composed {
        let confirmed = inventory.confirmed(&node.name)?;
        let report = inventory.last_report(&node.name)?;
        let p = crate::plan::plan(&c.declaration, confirmed.as_ref(), report.as_ref());
        let cost = match &c.resolved {
            Some(r) => node_cost_of(&r.assignments, &p, &c.declaration, confirmed.as_ref()),
            None => node_cost(inventory, &p, &c.declaration, confirmed.as_ref())?,
        };
        let providers = c.resolved.as_ref().map(|r| r.providers.clone());
        costs.push((node.clone(), cost, providers));
    }
    waves_of(inventory, catalogue, costs, options)
}

#[cfg(test)]
mod tests {
    use crate::plan::{Plan, UnitChange};
    use crate::wire::Cost;

    #[test]
    fn a_restart_is_charged_to_the_module_of_its_cause_and_a_first_start_to_none() {
        let dir = tempfile::tempdir().unwrap();
        let inv = crate::inventory::Inventory::init(&dir.path().join("i.db")).unwrap();
        inv.add_node(&crate::inventory::Node::new("n1", "192.0.2.1"))
            .unwrap();
        inv.assign("n1", "web", "www").unwrap();
        let unit = |verb, because: &str| UnitChange {
            unit: "www-main.service".into(),
            action: Cost::Restart,
            because: vec![because.into()],
            stops: false,
            verb,
        };
        let mut plan = Plan {
            node: "n1".into(),
            first_send: false,
            running: false,
            unconfirmed: false,
            rekeyed: false,
            new_machine: false,
            pending_confirmation: None,
            held: vec![],
            facts_moved: vec![],
            changes: vec![],
            units: vec![unit("restart", "www:process:www-main.service: port")],
            needs_confirmation: vec![],
        };
        let declaration: crate::wire::Declaration = serde_json::from_value(serde_json::json!({
            "version": 1, "node": "n1", "resources": [{"id": "www:process:www-main.service",
            "instance": "www", "module": "web@1", "kind": "directory", "path": "/x", "owner": "root", "group": "root", "mode": 493}]
        }))
        .unwrap();
        let cost = super::node_cost(&inv, &plan, &declaration, None).unwrap();
        assert_eq!(cost.restarts.into_iter().collect::<Vec<_>>(), vec!["web"]);

        // another module's file restarts www's process: the restart is www's module's to spend
        inv.assign("n1", "appconf", "conf").unwrap();
        plan.units = vec![unit("restart", "conf:file:/etc/www.conf")];
        let owned: crate::wire::Declaration = serde_json::from_value(serde_json::json!({
            "version": 1, "node": "n1", "resources": [
            {"id": "conf:file:/etc/www.conf", "instance": "conf", "module": "appconf@1",
             "kind": "directory", "path": "/y", "owner": "root", "group": "root", "mode": 493},
            {"id": "www:service:www-main.service", "instance": "www", "module": "web@1",
             "kind": "service", "unit": "www-main.service"}]
        }))
        .unwrap();
        let cost = super::node_cost(&inv, &plan, &owned, None).unwrap();
        assert_eq!(cost.restarts.into_iter().collect::<Vec<_>>(), vec!["web"]);
        plan.units = vec![unit("start", "www:process:www-main.service")];
        let cost = super::node_cost(&inv, &plan, &declaration, None).unwrap();
        assert!(cost.restarts.is_empty());
    }
}
