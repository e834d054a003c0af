//! What a plan says of a node whose push is in flight while another command holds the push
//! lock (found by an attacker): running, not interrupted.

use super::{push, render};

#[test]
fn a_push_running_in_another_command_is_said_running_not_interrupted() {
    use crate::inventory::{Inventory, Node};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inv.db");
    let mut pushing = Inventory::init(&path).unwrap();
    pushing.add_node(&Node::new("n", "192.0.2.1")).unwrap();
    pushing.lock_pushes().unwrap();
    pushing.begin_pushes("t0", &[("n", "d")]).unwrap();
    let planning = Inventory::open(&path).unwrap();
    let next = crate::wire::Declaration {
        version: crate::wire::VERSION,
        node: "n".into(),
        resources: vec![],
        expects_record: true,
        confirm_within: None,
        confirm_removals: vec![],
        keep: vec![],
        planned: None,
    };
    let planned = |inv: &Inventory| {
        let mut p = crate::plan::plan(&next, None, None);
        p.unconfirmed = inv.in_flight("n").unwrap();
        push::in_flight_elsewhere(inv, &mut p).unwrap();
        render::plan(&p, false, false)
    };
    let said = planned(&planning);
    assert!(
        said.contains("n: a push or rollback of it is running now in another command")
            && !said.contains("interrupted"),
        "{said}"
    );
    // the command holding the lock, and any once it is let go, see an interrupted push
    assert!(planned(&pushing).contains("n: unconfirmed: the last push was interrupted"));
    drop(pushing);
    assert!(planned(&planning).contains("the last push was interrupted"));
    // asking let go of the lock at once
    assert!(planning.lock_pushes().is_ok());
}
