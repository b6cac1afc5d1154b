//! `/openapi.json` as users consume it: a real validator accepts it (Python's
//! `openapi-spec-validator`, in setup's `target/python-venv`), and a real generator (`openapi-typescript`) makes types from it
//! that a request of each shape the server takes type-checks against (`tsc --strict`): a run's
//! `input` is any JSON value (an array, a number, null), not only an object. The tools come
//! from `scripts/setup.sh` (`tests/openapi/package-lock.json`); a machine without them fails
//! here, never skips.

use crate::support::{root, scratch_dir};
use std::process::Command;

fn ran(command: &mut Command) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} failed:\n{text}");
    text
}

/// Every parameter documented `in: path` is one of its path's `{…}`: a query's fields
/// documented as path parameters (utoipa's default for `IntoParams`) are a document no client
/// can follow. Checked here whatever the validator's version.
fn path_parameters_are_in_their_paths(doc: &std::path::Path) {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(doc).unwrap()).unwrap();
    let mut stray = Vec::new();
    for (path, operations) in doc["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let name = parameter["name"].as_str().unwrap();
                if parameter["in"] == "path" && !path.contains(&format!("{{{name}}}")) {
                    stray.push(format!("{method} {path}: {name}"));
                }
            }
        }
    }
    assert!(
        stray.is_empty(),
        "path parameters missing from their paths: {stray:?}"
    );
}

#[test]
fn serve_openapi_validates_and_generates_a_typed_client() {
    let dir = scratch_dir("serve-openapi");
    let tools = root().join("tests/openapi/node_modules/.bin");
    for (name, seed) in [("api", false), ("api-seed", true)] {
        let doc = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&palisade::serve::openapi::document(seed)).unwrap();
        std::fs::write(&doc, text).unwrap();
        path_parameters_are_in_their_paths(&doc);
        ran(Command::new(root().join("target/python-venv/bin/python"))
            .args(["-m", "openapi_spec_validator"])
            .arg(&doc));
        ran(Command::new(tools.join("openapi-typescript"))
            .arg(&doc)
            .arg("-o")
            .arg(dir.join(format!("{name}.ts"))));
    }
    std::fs::write(
        dir.join("check.ts"),
        r#"import type { components } from "./api";
import type { components as Seed } from "./api-seed";
type Run = components["schemas"]["RunRequest"];
type Action = components["schemas"]["ActionRequest"];
const runs: Run[] = [
  { policy: "default", source: "export default (x) => x", input: [1, 2, 3] },
  { policy: "default", source: "export default (x) => x", input: 42 },
  { policy: "default", source: "export default (x) => x", input: "text" },
  { policy: "default", source: "export default (x) => x", input: null },
  { policy: "default", source: "export default (x) => x", input: { n: 21 } },
];
const actions: Action[] = [
  { action: "inc", params: { by: 2 }, dry_run: true },
  { action: "inc", params: [1], if_preview: "ab" },
];
const press: Seed["schemas"]["PressBody"] = { action: "inc", params: 7 };
export { runs, actions, press };
"#,
    )
    .unwrap();
    ran(Command::new(tools.join("tsc"))
        .args([
            "--noEmit",
            "--strict",
            "--skipLibCheck",
            "--target",
            "es2022",
        ])
        .args(["--module", "nodenext", "--moduleResolution", "nodenext"])
        .arg(dir.join("check.ts")));
}
