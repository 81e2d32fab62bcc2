//! The protobuf field table: fields.txt (written by generate_fields.py from
//! the k8s-pb and k8s-openapi sources) parsed once into per-message field
//! lists and the (apiVersion, kind) → message map.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The wire-level type of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    Int32,
    Int64,
    Bool,
    Double,
    Bytes,
    Message,
    Map,
}

/// One field of a message.
#[derive(Clone, Debug)]
pub struct Field {
    pub tag: u32,
    /// prost's snake_case name (`r#` stripped).
    pub rust_name: String,
    pub kind: Kind,
    pub repeated: bool,
    /// Message type of a message field, or of a map's values.
    pub type_name: Option<String>,
    /// Scalar kind of a map's values when they are not messages.
    pub map_value: Option<Kind>,
    /// JSON name from k8s-openapi when it is not plain lowerCamelCase.
    pub json: Option<String>,
    /// JSON always carries this field (no omitempty).
    pub required: bool,
}

/// One message: its fields in declaration order.
#[derive(Clone, Debug, Default)]
pub struct Message {
    pub fields: Vec<Field>,
}

impl Message {
    pub fn field(&self, tag: u32) -> Option<(usize, &Field)> {
        self.fields.iter().enumerate().find(|(_, f)| f.tag == tag)
    }
}

/// Every known message plus the kinds clients post.
#[derive(Debug, Default)]
pub struct Table {
    pub messages: HashMap<String, Message>,
    /// (apiVersion, kind) → message name.
    pub kinds: HashMap<(String, String), String>,
}

/// The message of meta.k8s.io/v1 DeleteOptions.
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";

impl Table {
    /// The message a client's (apiVersion, kind) is encoded with. kube's
    /// scheme registers DeleteOptions in every group version (client-go
    /// sends `apps/v1 DeleteOptions` for a delete through the apps client)
    /// and its meta scheme decodes it whatever the version, so every
    /// apiVersion's DeleteOptions is meta.k8s.io/v1's.
    pub fn message_for(&self, api_version: &str, kind: &str) -> Option<&str> {
        let key = (api_version.to_string(), kind.to_string());
        match self.kinds.get(&key) {
            Some(message) => Some(message),
            None if kind == "DeleteOptions" => Some(DELETE_OPTIONS),
            None => None,
        }
    }
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// The table built from the embedded fields.txt.
pub fn table() -> &'static Table {
    TABLE.get_or_init(|| parse(include_str!("fields.txt")))
}

fn scalar_kind(word: &str) -> Option<Kind> {
    Some(match word {
        "string" => Kind::String,
        "int32" => Kind::Int32,
        "int64" => Kind::Int64,
        "bool" => Kind::Bool,
        "double" => Kind::Double,
        "bytes" => Kind::Bytes,
        "message" => Kind::Message,
        "map" => Kind::Map,
        _ => return None,
    })
}

/// Parses one `tag rust_name kind [repeated] [type] [json=NAME] [req]` line.
fn parse_field(line: &str) -> Option<Field> {
    let mut words = line.split_whitespace();
    let tag = words.next()?.parse().ok()?;
    let rust_name = words.next()?.to_string();
    let kind = scalar_kind(words.next()?)?;
    let mut field = Field {
        tag,
        rust_name,
        kind,
        repeated: false,
        type_name: None,
        map_value: None,
        json: None,
        required: false,
    };
    for word in words {
        match word {
            "repeated" => field.repeated = true,
            "req" => field.required = true,
            w if w.starts_with("json=") => field.json = Some(w[5..].to_string()),
            w if kind == Kind::Map => {
                let value = w.split_once(',')?.1;
                match scalar_kind(value) {
                    Some(k) => field.map_value = Some(k),
                    None => field.type_name = Some(value.to_string()),
                }
            }
            w => field.type_name = Some(w.to_string()),
        }
    }
    Some(field)
}

/// Parses fields.txt; malformed lines are skipped (the file is generated).
pub fn parse(text: &str) -> Table {
    let mut table = Table::default();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("message ") {
            table.messages.insert(name.to_string(), Message::default());
            current = Some(name.to_string());
        } else if let Some(rest) = line.strip_prefix("kind ") {
            let parts: Vec<&str> = rest.split_whitespace().collect();
            if let [api_version, kind, message] = parts[..] {
                let key = (api_version.to_string(), kind.to_string());
                table.kinds.insert(key, message.to_string());
            }
        } else if let (Some(name), Some(field)) = (&current, parse_field(line)) {
            if let Some(message) = table.messages.get_mut(name) {
                message.fields.push(field);
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_table_has_deployment_and_kinds() {
        let t = table();
        let spec = &t.messages["io.k8s.api.apps.v1.DeploymentSpec"];
        let (_, replicas) = spec.field(1).unwrap();
        assert_eq!(replicas.rust_name, "replicas");
        assert_eq!(replicas.kind, Kind::Int32);
        let (_, template) = spec.field(3).unwrap();
        assert_eq!(
            template.type_name.as_deref(),
            Some("io.k8s.api.core.v1.PodTemplateSpec")
        );
        let key = ("apps/v1".to_string(), "Deployment".to_string());
        assert_eq!(t.kinds[&key], "io.k8s.api.apps.v1.Deployment");
        for (api, kind) in [
            ("authentication.k8s.io/v1", "TokenRequest"),
            ("authorization.k8s.io/v1", "SelfSubjectAccessReview"),
            ("v1", "DeleteOptions"),
            ("meta.k8s.io/v1", "DeleteOptions"),
            ("policy/v1", "Eviction"),
            ("autoscaling/v1", "Scale"),
        ] {
            assert!(
                t.kinds.contains_key(&(api.into(), kind.into())),
                "{api} {kind}"
            );
        }
    }

    #[test]
    fn every_field_line_parses_and_every_type_is_known() {
        let text = include_str!("fields.txt");
        let lines = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count();
        let t = table();
        let parsed: usize = t.messages.values().map(|m| m.fields.len()).sum();
        assert_eq!(parsed, lines);
        for (name, message) in &t.messages {
            for f in &message.fields {
                if let Some(ty) = &f.type_name {
                    assert!(
                        t.messages.contains_key(ty),
                        "{name}.{} -> {ty}",
                        f.rust_name
                    );
                }
            }
        }
        assert!(t.kinds.values().all(|m| t.messages.contains_key(m)));
    }

    #[test]
    fn delete_options_of_any_group_version_is_meta_v1() {
        let t = table();
        for api in ["apps/v1", "apiextensions.k8s.io/v1", "batch/v1", "v1"] {
            assert_eq!(t.message_for(api, "DeleteOptions"), Some(DELETE_OPTIONS));
        }
        assert_eq!(t.message_for("apps/v1", "Widget"), None);
        assert_eq!(t.message_for("example.com/v1", "CreateOptions"), None);
    }

    #[test]
    fn parses_maps_json_names_and_required() {
        let t = parse(
            "message a.B\n1 data map string,bytes\n2 hard map string,x.Quantity\n\
             3 non_resource_ur_ls string repeated json=nonResourceURLs req\n",
        );
        let b = &t.messages["a.B"];
        assert_eq!(b.fields[0].map_value, Some(Kind::Bytes));
        assert_eq!(b.fields[1].type_name.as_deref(), Some("x.Quantity"));
        assert_eq!(b.fields[2].json.as_deref(), Some("nonResourceURLs"));
        assert!(b.fields[2].repeated && b.fields[2].required);
    }
}
