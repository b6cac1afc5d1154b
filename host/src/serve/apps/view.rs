//! Views for an audience, and the HTML rendering. `agent` drops every `presentation` field and
//! every node marked `audience: "human"`; `human` keeps presentation and drops the nodes marked
//! `audience: "agent"`. The HTML rendering escapes every string the view holds, in text and in
//! attributes alike, and names classes only with letters, digits, `-` and `_`: a view can
//! never inject markup or script.

use serde_json::Value;

/// Who a view is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// An agent: no presentation, no human-only nodes.
    Agent,
    /// A person: presentation kept, no agent-only nodes.
    Human,
}

impl Audience {
    /// `agent` or `human`.
    pub fn parse(text: &str) -> Option<Audience> {
        match text {
            "agent" => Some(Audience::Agent),
            "human" => Some(Audience::Human),
            _ => None,
        }
    }

    fn hidden(self) -> &'static str {
        match self {
            Audience::Agent => "human",
            Audience::Human => "agent",
        }
    }
}

fn hidden_node(value: &Value, audience: Audience) -> bool {
    value
        .get("audience")
        .and_then(Value::as_str)
        .is_some_and(|a| a == audience.hidden())
}

/// `view` as `audience` sees it.
pub fn filter(view: &Value, audience: Audience) -> Value {
    match view {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| {
                    let presentation = audience == Audience::Agent && k.as_str() == "presentation";
                    !presentation && !hidden_node(v, audience)
                })
                .map(|(k, v)| (k.clone(), filter(v, audience)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .filter(|v| !hidden_node(v, audience))
                .map(|v| filter(v, audience))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Escape text for HTML content and quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A class name from a node's `type`: only letters, digits, `-` and `_`.
fn class(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect()
}

/// Deepest nesting rendered; deeper nodes are shown as `…` (a hostile view cannot make the
/// host recurse without bound).
const MAX_DEPTH: usize = 64;

fn render(value: &Value, depth: usize, out: &mut String) {
    if depth > MAX_DEPTH {
        out.push('…');
        return;
    }
    match value {
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str).unwrap_or("node");
            out.push_str(&format!("<div class=\"jace-{}\"", class(kind)));
            if let Some(id) = map.get("id").and_then(Value::as_str) {
                out.push_str(&format!(" data-id=\"{}\"", escape(id)));
            }
            out.push('>');
            for key in ["title", "label", "value", "text"] {
                if let Some(v) = map.get(key) {
                    out.push_str(&format!("<span class=\"jace-{key}\">"));
                    render(v, depth + 1, out);
                    out.push_str("</span>");
                }
            }
            for (key, v) in map {
                if matches!(
                    key.as_str(),
                    "type"
                        | "id"
                        | "title"
                        | "label"
                        | "value"
                        | "text"
                        | "presentation"
                        | "audience"
                ) {
                    continue;
                }
                out.push_str(&format!(
                    "<div class=\"jace-field\" data-key=\"{}\">",
                    escape(key)
                ));
                render(v, depth + 1, out);
                out.push_str("</div>");
            }
            out.push_str("</div>");
        }
        Value::Array(items) => {
            out.push_str("<ul>");
            for item in items {
                out.push_str("<li>");
                render(item, depth + 1, out);
                out.push_str("</li>");
            }
            out.push_str("</ul>");
        }
        Value::String(s) => out.push_str(&escape(s)),
        Value::Null => {}
        other => out.push_str(&escape(&other.to_string())),
    }
}

/// A whole HTML page of `view` (for people: presentation kept, agent-only nodes dropped).
pub fn html(view: &Value) -> String {
    let view = filter(view, Audience::Human);
    let title = view
        .get("title")
        .and_then(Value::as_str)
        .map_or_else(|| "app".to_owned(), escape);
    let mut body = String::new();
    render(&view, 0, &mut body);
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body>{body}</body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn audiences_filter_nodes_and_presentation() {
        let view = json!({"type": "page", "presentation": {"color": "red"}, "children": [
            {"type": "text", "value": "both"},
            {"type": "text", "value": "people", "audience": "human", "presentation": {}},
            {"type": "actions", "audience": "agent", "items": ["a"]},
        ]});
        let agent = filter(&view, Audience::Agent);
        assert_eq!(
            agent,
            json!({"type": "page", "children": [
                {"type": "text", "value": "both"},
                {"type": "actions", "audience": "agent", "items": ["a"]},
            ]})
        );
        let human = filter(&view, Audience::Human);
        assert_eq!(human["presentation"], json!({"color": "red"}));
        assert_eq!(human["children"].as_array().unwrap().len(), 2);
        assert_eq!(human["children"][1]["value"], "people");
    }

    #[test]
    fn html_escapes_everything() {
        let view = json!({"type": "x\"><script>", "id": "\"><img src=x onerror=alert(1)>",
            "title": "<script>alert(1)</script>", "items": ["<b>&</b>"], "<k>": "'"});
        let page = html(&view);
        assert!(!page.contains("<script"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(!page.contains("<k>"), "{page}");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{page}"
        );
    }
}
