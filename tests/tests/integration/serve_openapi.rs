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

#[test]
fn serve_openapi_validates_and_generates_a_typed_client() {
    let dir = scratch_dir("serve-openapi");
    let tools = root().join("tests/openapi/node_modules/.bin");
    for (name, seed) in [("api", false), ("api-seed", true)] {
        let doc = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(&palisade::serve::openapi::document(seed)).unwrap();
        std::fs::write(&doc, text).unwrap();
        ran(Command::new("python3")
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
