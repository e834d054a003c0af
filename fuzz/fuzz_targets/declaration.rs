//! The helper's declaration reader on anything, as it reads its stdin: never a panic, and every
//! resource it does not refuse names only paths that stay where they belong (absolute, no `..`,
//! not the helper's own state but for a bundle).
#![no_main]

use mesh_wire::path::Place;
use mesh_wire::{STATE_DIR, read};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(declaration) = read::declaration(data) else {
        return;
    };
    let refused: Vec<String> = read::refusals(&declaration)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    for resource in &declaration.resources {
        if refused.contains(&resource.id) {
            continue;
        }
        for (field, path, place) in resource.spec.paths() {
            assert!(!path.split('/').any(|c| c == ".."), "{field} {path:?} passed");
            assert!(!path.chars().any(char::is_control), "{field} {path:?} passed");
            match place {
                Place::InBundle => assert!(!path.starts_with('/'), "{field} {path:?}"),
                Place::Bundle => {
                    assert!(path.starts_with(&format!("{STATE_DIR}/bundles/")), "{path:?}")
                }
                _ => {
                    assert!(path.starts_with('/'), "{field} {path:?} passed");
                    if place == Place::Machine {
                        assert!(
                            path != STATE_DIR && !path.starts_with(&format!("{STATE_DIR}/")),
                            "{field} {path:?} passed"
                        );
                    }
                }
            }
        }
    }
});
