//! A push from a stale inventory: the helper refuses it (see
//! `mesh_wire::stale`), and `push --overwrite` says it replaces whatever the machine has.

use crate::wire::Declaration;

/// Makes `declaration` replace whatever generation its machine is at (`push --overwrite`);
/// returns what the plan says of it.
pub fn overwrite(declaration: &mut Declaration) -> String {
    if let Some(planned) = &mut declaration.planned {
        planned.overwrite = true;
    }
    format!(
        "{}: --overwrite: replaces whatever generation the machine is at, a newer one another \
         inventory pushed included, without asking",
        declaration.node
    )
}

#[cfg(test)]
mod tests {
    use super::super::PushError;
    use crate::wire::Stale;

    #[test]
    fn a_stale_refusal_is_a_typed_failure_naming_the_machines_generation_and_check() {
        let e = PushError::Stale {
            node: "web1".into(),
            stale: Box::new(Stale {
                machine: crate::wire::Generation {
                    number: 7,
                    inventory: "a1b2".into(),
                    pushed_at: 1_796_173_200,
                    rolled_back_to: None,
                    push: None,
                },
                planned: Some(crate::wire::Known {
                    number: 6,
                    inventory: "a1b2".into(),
                }),
            }),
        };
        assert_eq!(e.kind(), "stale");
        let said = e.to_string();
        for words in [
            "web1: refused (stale), nothing on the machine was changed",
            "generation 7, pushed at 2026-12-02T01:00:00 UTC from inventory a1b2",
            "`mesh check web1`",
            "--overwrite",
        ] {
            assert!(said.contains(words), "{said}");
        }
    }

    #[test]
    fn a_machine_record_at_a_generation_no_push_makes_is_refused_naming_the_node_and_the_fix() {
        let at = |number| crate::wire::Generation {
            number,
            inventory: "a1b2".into(),
            pushed_at: 1,
            rolled_back_to: None,
            push: None,
        };
        assert!(
            super::super::answer::impossible("web1", Some(&at(9_223_372_036_854_775_807))).is_ok()
        );
        let e = super::super::answer::impossible("web1", Some(&at(9_223_372_036_854_775_808)))
            .unwrap_err();
        assert_eq!(e.kind(), "record");
        let said = e.to_string();
        for words in [
            "web1: the machine's record says it is at generation 9223372036854775808",
            "no push makes",
            "/var/lib/mesh/record.json",
            "`mesh check web1`",
        ] {
            assert!(said.contains(words), "{said}");
        }
    }
}
