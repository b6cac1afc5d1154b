//! `[fs]`: mounted directories through WASI preopens. What is not mounted does not exist; `..`,
//! symlinks and absolute paths cannot leave a mount; read-only means read-only.

use crate::support::*;
use palisade::Policy;
use serde_json::{Value, json};

struct Dirs {
    root: std::path::PathBuf,
}

impl Dirs {
    fn new(name: &str) -> Self {
        let root = std::env::temp_dir().join(format!("palisade-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("ro/sub")).unwrap();
        std::fs::create_dir_all(root.join("rw")).unwrap();
        std::fs::write(root.join("ro/a.txt"), "hello").unwrap();
        std::fs::write(root.join("secret.txt"), "outside every mount").unwrap();
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("ro/link")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", root.join("ro/rel-link")).unwrap();
        Self { root }
    }

    fn policy(&self) -> Policy {
        policy(&format!(
            "[[fs.mount]]\nhost = \"{}\"\nguest = \"/workspace\"\n\n[[fs.mount]]\nhost = \"{}\"\nguest = \"/scratch\"\nmode = \"rw\"\n",
            self.root.join("ro").display(),
            self.root.join("rw").display()
        ))
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

async fn probe(p: &Policy, ops: Value) -> Value {
    let outcome = run(p, "fs_probe.js", &ops.to_string()).await;
    serde_json::from_str(output(&outcome)).unwrap()
}

#[tokio::test]
async fn mounts_can_be_read_and_rw_mounts_written() {
    let dirs = Dirs::new("rw");
    let got = probe(
        &dirs.policy(),
        json!([
            ["read", "readFile", "/workspace/a.txt"],
            ["list", "readdir", "/workspace"],
            ["stat", "stat", "/workspace/a.txt"],
            ["write", "writeFile", "/scratch/out.txt", "written"],
            ["readBack", "readFile", "/scratch/out.txt"],
            ["mkdir", "mkdir", "/scratch/d/e", { "recursive": true }],
            ["rm", "rm", "/scratch/d", { "recursive": true }],
        ]),
    )
    .await;
    assert_eq!(got["read"], "hello");
    assert_eq!(got["list"], json!(["a.txt", "link", "rel-link", "sub"]));
    assert_eq!(
        got["stat"],
        json!({ "size": 5, "isFile": true, "isDirectory": false })
    );
    assert_eq!(
        (&got["write"], &got["readBack"]),
        (&json!("ok"), &json!("written"))
    );
    assert_eq!((&got["mkdir"], &got["rm"]), (&json!("ok"), &json!("ok")));
    assert_eq!(
        std::fs::read_to_string(dirs.root.join("rw/out.txt")).unwrap(),
        "written",
        "writes land on the host"
    );
    assert!(!dirs.root.join("rw/d").exists());
}

#[tokio::test]
async fn nothing_leaves_a_mount_and_read_only_holds() {
    let dirs = Dirs::new("escape");
    let got = probe(
        &dirs.policy(),
        json!([
            ["dotdot", "readFile", "/workspace/../secret.txt"],
            ["deep", "readFile", "/workspace/sub/../../secret.txt"],
            ["link", "readFile", "/workspace/link"],
            ["relLink", "readFile", "/workspace/rel-link"],
            [
                "absolute",
                "readFile",
                dirs.root.join("secret.txt").display().to_string()
            ],
            ["etc", "readFile", "/etc/passwd"],
            ["writeRo", "writeFile", "/workspace/new.txt", "x"],
            ["rmRo", "rm", "/workspace/a.txt"],
            ["mkdirRo", "mkdir", "/workspace/newdir"],
        ]),
    )
    .await;
    for key in [
        "dotdot", "deep", "link", "relLink", "writeRo", "rmRo", "mkdirRo",
    ] {
        assert_eq!(got[key], "ERR EACCES", "{key}: {got}");
    }
    for key in ["absolute", "etc"] {
        assert_eq!(got[key], "ERR ENOENT", "{key}: {got}");
    }
    assert!(!dirs.root.join("ro/new.txt").exists());
    assert!(dirs.root.join("ro/a.txt").exists());
}

#[tokio::test]
async fn without_mounts_fs_is_refused_with_the_fix() {
    // In the plain guest (no grant at all) and in the full guest (another grant).
    for p in [
        Policy::builtin_default(),
        policy("[config]\nregion = \"eu\"\n"),
    ] {
        assert_ungranted(
            &p,
            "fs.readFile('/data/in.json')",
            "fs",
            "fs.scratch = { guest = \"/data\" }",
        )
        .await;
    }
    assert_ungranted(
        &Policy::builtin_default(),
        "fs.writeFile('out.txt', 'x')",
        "fs",
        "fs.scratch = { guest = \"/scratch\" }",
    )
    .await;
}

#[tokio::test]
async fn the_run_js_tool_policy_reads_its_workspace() {
    let p = Policy::from_file(root().join("policies/run-js-tool.toml")).unwrap();
    let source = "export default async () => { const rows = (await fs.readFile('/workspace/scores.csv')).trim().split('\\n').slice(1); \
                  return rows.map((r) => r.split(',')).filter((r) => +r[2] > 80).map((r) => r[1]); }";
    let outcome = PALISADE
        .run(&p, &palisade::Script::new("tool.js", source), "null")
        .await;
    assert_eq!(output(&outcome), r#"["ada","grace"]"#);
    let outcome = run(&p, "infinite_loop.js", "null").await;
    assert!(["timeout", "fuel_exhausted"].contains(&code(&outcome)));
}

#[test]
fn bad_mounts_are_invalid_policies() {
    for (toml, key) in [
        (
            "[[fs.mount]]\nhost = \"/definitely/not/here\"\nguest = \"/w\"\n",
            "fs.mount[0].host",
        ),
        (
            "[[fs.mount]]\nhost = \".\"\nguest = \"relative\"\n",
            "fs.mount[0].guest",
        ),
        (
            "[[fs.mount]]\nhost = \".\"\nguest = \"/w/../x\"\n",
            "fs.mount[0].guest",
        ),
        (
            "[[fs.mount]]\nhost = \".\"\nguest = \"/w\"\nmode = \"wr\"\n",
            "fs.mount[0].mode",
        ),
        (
            "[[fs.mount]]\nhost = \".\"\nguest = \"/w\"\n[[fs.mount]]\nhost = \".\"\nguest = \"/w\"\n",
            "fs.mount[1].guest",
        ),
        (
            "[[fs.mount]]\nhost = \"Cargo.toml\"\nguest = \"/w\"\n",
            "fs.mount[0].host",
        ),
    ] {
        let error = Policy::from_toml(toml, None).expect_err(toml);
        assert_eq!(error.key, key, "{toml}: {error}");
    }
}
