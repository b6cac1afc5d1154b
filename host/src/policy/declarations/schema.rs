//! A capability's JSON Schema as a TypeScript type. The type admits at least every value the
//! schema admits: a keyword TypeScript cannot say (`pattern`, `minimum`, `$ref`, `not`, …) is
//! left out, which makes the type wider, never narrower, and the host's own check of the schema
//! still runs on every call.

use serde_json::{Map, Value};

/// Schemas nested deeper than this become `unknown`: the text stays bounded whatever the schema.
const MAX_DEPTH: usize = 24;

/// The TypeScript type of the values `schema` admits.
pub(crate) fn type_of(schema: &Value) -> String {
    ts(schema, 0)
}

fn ts(schema: &Value, depth: usize) -> String {
    let object = match schema {
        Value::Bool(true) => return "unknown".into(),
        Value::Bool(false) => return "never".into(),
        Value::Object(object) if depth < MAX_DEPTH => object,
        _ => return "unknown".into(),
    };
    if let Some(value) = object.get("const") {
        return literal(value);
    }
    if let Some(Value::Array(values)) = object.get("enum") {
        return union(values.iter().map(literal).collect());
    }
    let mut parts = Vec::new();
    if let Some(base) = base(object, depth) {
        parts.push(base);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = object.get(key) {
            parts.push(union(options.iter().map(|s| ts(s, depth + 1)).collect()));
        }
    }
    if let Some(Value::Array(all)) = object.get("allOf") {
        parts.extend(all.iter().map(|s| ts(s, depth + 1)));
    }
    parts.retain(|p| p != "unknown");
    match parts.len() {
        0 => "unknown".into(),
        1 => parts.remove(0),
        _ => parts
            .iter()
            .map(|p| format!("({p})"))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// The type that `type` (or, without it, `properties` or `items`) says.
fn base(object: &Map<String, Value>, depth: usize) -> Option<String> {
    let types: Vec<&str> = match object.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ if object.contains_key("properties") => vec!["object"],
        _ if object.contains_key("items") || object.contains_key("prefixItems") => vec!["array"],
        _ => return None,
    };
    let each = types
        .iter()
        .map(|t| match *t {
            "string" => "string".to_owned(),
            "number" | "integer" => "number".to_owned(),
            "boolean" => "boolean".to_owned(),
            "null" => "null".to_owned(),
            "array" => array(object, depth),
            "object" => shape(object, depth),
            _ => "unknown".to_owned(),
        })
        .collect();
    Some(union(each))
}

fn array(object: &Map<String, Value>, depth: usize) -> String {
    if let Some(Value::Array(prefix)) = object.get("prefixItems") {
        let mut items: Vec<String> = prefix.iter().map(|s| ts(s, depth + 1)).collect();
        match object.get("items") {
            Some(Value::Bool(false)) => {}
            Some(rest) => items.push(format!("...({})[]", ts(rest, depth + 1))),
            None => items.push("...unknown[]".into()),
        }
        return format!("[{}]", items.join(", "));
    }
    let item = object
        .get("items")
        .map_or("unknown".into(), |s| ts(s, depth + 1));
    format!("({item})[]")
}

fn shape(object: &Map<String, Value>, depth: usize) -> String {
    let required: Vec<&str> = match object.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut fields = Vec::new();
    if let Some(Value::Object(properties)) = object.get("properties") {
        for (name, schema) in properties {
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            let doc = schema
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!("/** {} */ ", comment(d)))
                .unwrap_or_default();
            fields.push(format!(
                "{doc}{}{optional}: {}",
                key(name),
                ts(schema, depth + 1)
            ));
        }
    }
    for name in required.iter().filter(|n| !fields_named(object, n)) {
        fields.push(format!("{}: unknown", key(name)));
    }
    match object.get("additionalProperties") {
        Some(Value::Bool(false)) => {}
        Some(extra @ Value::Object(_)) if !object.contains_key("properties") => {
            fields.push(format!("[key: string]: {}", ts(extra, depth + 1)));
        }
        _ => fields.push("[key: string]: unknown".into()),
    }
    format!("{{ {} }}", fields.join("; "))
}

fn fields_named(object: &Map<String, Value>, name: &str) -> bool {
    object
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| p.contains_key(name))
}

/// A JSON value as a TypeScript literal type (JSON's own syntax is TypeScript's).
fn literal(value: &Value) -> String {
    value.to_string()
}

fn union(types: Vec<String>) -> String {
    if types.is_empty() {
        return "never".into();
    }
    if types.iter().any(|t| t == "unknown") {
        return "unknown".into();
    }
    types.join(" | ")
}

/// A property name: bare when it is an identifier, else a string literal.
pub(crate) fn key(name: &str) -> String {
    let mut chars = name.chars();
    let identifier = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// Text for a `/** … */` comment, on one line, that cannot close it early.
pub(crate) fn comment(text: &str) -> String {
    text.replace("*/", "*\\/").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::type_of;
    use serde_json::json;

    #[test]
    fn objects_arrays_and_literals() {
        let schema = json!({"type": "object", "required": ["op"],
            "properties": {"op": {"enum": ["add", "sub"]}, "args": {"type": "array", "items": {"type": "integer"}}},
            "additionalProperties": false});
        assert_eq!(
            type_of(&schema),
            r#"{ args?: (number)[]; op: "add" | "sub" }"#
        );
        assert_eq!(
            type_of(&json!({"type": ["string", "null"]})),
            "string | null"
        );
        assert_eq!(type_of(&json!({"const": {"a": 1}})), r#"{"a":1}"#);
        assert_eq!(
            type_of(
                &json!({"type": "object", "properties": {"my-key": {"type": "string", "description": "a */ b"}}})
            ),
            r#"{ /** a *\/ b */ "my-key"?: string; [key: string]: unknown }"#
        );
    }

    #[test]
    fn what_typescript_cannot_say_is_wider() {
        assert_eq!(type_of(&json!({"$ref": "#/defs/x"})), "unknown");
        assert_eq!(
            type_of(&json!({"type": "string", "pattern": "^a"})),
            "string"
        );
        assert_eq!(
            type_of(&json!({"anyOf": [{"type": "string"}, {}]})),
            "unknown"
        );
        assert_eq!(
            type_of(&json!({"prefixItems": [{"type": "string"}], "items": false})),
            "[string]"
        );
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "array", "items": deep});
        }
        assert!(type_of(&deep).contains("unknown"));
    }
}
