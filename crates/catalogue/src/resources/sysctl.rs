//! A kernel setting the module sets: its definition, its check and its description. The name
//! is literal (it names the drop-in and the `/proc/sys` file); the value may read settings.

use serde::Deserialize;
use serde_json::Value;

use super::parser::Parser;
use super::{Definition, ResourceDef};
use crate::scope::Reading;
use crate::{CatalogueError, Template};

/// `name` set to `value`.
#[derive(Debug, Clone)]
pub struct SysctlDef {
    pub name: String,
    pub value: Template,
}

impl Definition for SysctlDef {
    const KIND: &'static str = "sysctl";

    fn parse(
        parser: &mut Parser<'_>,
        i: usize,
        value: Value,
    ) -> Result<ResourceDef, CatalogueError> {
        parser.sysctl(i, value)
    }

    fn describe(&self) -> String {
        format!(
            "{} = {} (applied at once and kept in /etc/sysctl.d/; the value found is given back \
             when undeclared)",
            self.name,
            self.value.source_text()
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSysctl {
    #[allow(dead_code)]
    kind: String,
    name: Option<String>,
    /// A number or a string: `1`, `"0 2147483647"`, `"${forward}"`.
    value: Option<Value>,
}

impl Parser<'_> {
    pub(super) fn sysctl(&mut self, i: usize, value: Value) -> Result<ResourceDef, CatalogueError> {
        let s: RawSysctl = self.raw(i, value)?;
        let name = self.required(
            i,
            "name",
            s.name,
            mesh_wire::valid_sysctl,
            "a sysctl name like net.ipv4.ip_forward",
        )?;
        let key = format!("sysctl {name}");
        if self.units.contains(&key) {
            return Err(self.invalid(
                &format!("resources[{i}].name"),
                format!("{name} is declared twice"),
            ));
        }
        self.units.push(key);
        let field = format!("resources[{i}].value");
        let text = match s.value {
            Some(Value::String(text)) => text,
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(
                    self.invalid(&field, format!("{other} is neither a number nor a string"))
                );
            }
            None => return Err(self.invalid(&field, "missing".into())),
        };
        let value = self.template(i, "value", &text, Reading::Plain)?;
        // a literal value is checked now by the rule the plan checks it by once filled in
        if let Some(literal) = value.literal() {
            let spec = mesh_wire::SysctlSpec {
                name: name.clone(),
                value: literal,
            };
            if let Err(r) = spec.check() {
                return Err(self.invalid(&field, format!("{:?}: {}", r.value, r.reason)));
            }
        }
        Ok(ResourceDef::from(SysctlDef { name, value }))
    }
}
