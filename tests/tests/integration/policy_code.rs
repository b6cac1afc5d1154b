//! Policies from code: the builder and `Policy::from_json` reach the policy the TOML gives, and
//! the JSON Schema that `palisade policy schema` prints accepts every shipped policy file.

use crate::support::{root, scratch_dir};
use palisade::Policy;
use palisade::policy::{
    BucketMode, ByteSize, CapabilityBuilder, HttpBuilder, HttpRuleBuilder, KvBuilder, MountMode,
    OverridesBuilder, ScratchBuilder,
};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

fn schema_validator() -> jsonschema::Validator {
    jsonschema::validator_for(&Policy::json_schema()).expect("the policy schema is a schema")
}

/// A TOML policy file read as data, the way an editor checks it against the schema.
fn as_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(value).unwrap()
}

fn schema_errors(validator: &jsonschema::Validator, value: &serde_json::Value) -> Vec<String> {
    validator
        .iter_errors(value)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn every_shipped_policy_matches_the_schema() {
    let validator = schema_validator();
    let mut checked = 0;
    for dir in ["policies", "tests/fixtures/policies"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let errors = schema_errors(&validator, &as_json(&path));
                assert!(errors.is_empty(), "{}: {errors:?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 7, "checked {checked} files");

    // The schema refuses what the policy's own parser refuses for shape: an unknown key, a size
    // without a unit, a mode that does not exist.
    let bad = root().join("tests/fixtures/policies/bad");
    for (file, at) in [
        ("unknown_key.toml", ""),
        ("bare_number_size.toml", "/limits/memory"),
        ("kv_bad_mode.toml", "/kv/buckets"),
    ] {
        let errors = schema_errors(&validator, &as_json(&bad.join(file)));
        assert!(
            errors.iter().any(|e| e.starts_with(at)),
            "{file}: {errors:?}"
        );
        assert!(Policy::from_file(bad.join(file)).is_err(), "{file}");
    }
}

#[test]
fn the_cli_prints_the_schema() {
    let out = std::process::Command::new(crate::cli::palisade_bin())
        .args(["policy", "schema"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, Policy::json_schema());
    assert_eq!(printed["title"], "Palisade policy");
    assert_eq!(printed["additionalProperties"], false);
}

/// One policy that sets every table, written three ways.
struct Every {
    toml: String,
    json: String,
}

fn every_table(dir: &Path) -> Every {
    let mount = dir.join("mount");
    std::fs::create_dir_all(&mount).unwrap();
    let seed = dir.join("seed.txt");
    std::fs::write(&seed, "seed").unwrap();
    let secret = dir.join("token");
    std::fs::write(&secret, "s3cret-token").unwrap();
    let (mount, seed, secret) = (
        mount.canonicalize().unwrap(),
        seed.canonicalize().unwrap(),
        secret.canonicalize().unwrap(),
    );
    let toml = format!(
        r#"name = "every"
description = "every table"

[limits]
fuel = 123456789
memory = "96MiB"
timeout = "1500ms"
stack = "2MiB"
output = "2MiB"
input = "512KiB"
console = "16KiB"
transcript = "1MiB"

[http]
max_requests = 7
max_request_body = "64KiB"
max_response_body = "2MiB"
timeout = "3s"
rate = "60/min"
allow_private = ["10.0.0.0/8"]
allow_private_hosts = ["db.internal.test"]

[[http.allow]]
url = "https://api.example.com/v1/"
methods = ["GET", "POST"]
headers = {{ authorization = "Bearer ${{secret:token}}" }}

[secrets]
token = {{ file = "{secret}" }}

[kv]
namespace = "every"
max_key = "256B"
max_value = "128KiB"
max_keys = 50

[kv.buckets]
state = "rw"

[capabilities]
global = "tools"

[capabilities.allow.lookup]
max_calls = 3
max_payload = "4KiB"
max_response = "8KiB"
schema = {{ type = "object", required = ["id"], properties = {{ id = {{ type = "integer", minimum = 1 }} }} }}

[capabilities.allow.notify]
forward = "http://127.0.0.1:9000/notify"

[config]
region = "eu"
tier = "gold"

[[fs.mount]]
host = "{mount}"
guest = "/data"
mode = "rw"
quota = "1MiB"
max_files = 20

[fs.scratch]
guest = "/scratch"
quota = "2MiB"
max_files = 30
seed = ["{seed}"]

[determinism]
clock = "fixed"
instant = "2024-01-02T03:04:05Z"
seed = 42

[overrides]
timeout = "10s"
fuel = 999999999
memory = "256MiB"
now = true
seed = true
config = ["region", "tier"]
"#,
        secret = secret.display(),
        mount = mount.display(),
        seed = seed.display(),
    );
    let json = serde_json::to_string_pretty(
        &serde_json::to_value(toml::from_str::<toml::Value>(&toml).unwrap()).unwrap(),
    )
    .unwrap();
    Every { toml, json }
}

#[test]
fn builder_and_json_reach_the_policy_the_toml_gives() {
    let dir = scratch_dir("policy-code");
    let every = every_table(&dir);
    let from_toml = Policy::from_toml(&every.toml, None).unwrap();

    let canonical = |p: &Path| p.canonicalize().unwrap();
    let builder = Policy::builder("every")
        .description("every table")
        .fuel(123_456_789)
        .memory(ByteSize(96 << 20))
        .timeout(Duration::from_millis(1500))
        .stack(ByteSize(2 << 20))
        .output(ByteSize(2 << 20))
        .input(ByteSize(512 << 10))
        .console(ByteSize(16 << 10))
        .transcript(ByteSize(1 << 20))
        .http(
            HttpBuilder::new()
                .max_requests(7)
                .max_request_body(ByteSize(64 << 10))
                .max_response_body(ByteSize(2 << 20))
                .timeout(Duration::from_secs(3))
                .rate(60, Duration::from_secs(60))
                .allow_private("10.0.0.0/8")
                .allow_private_host("db.internal.test")
                .allow(
                    HttpRuleBuilder::new("https://api.example.com/v1/")
                        .methods(["GET", "POST"])
                        .header("authorization", "Bearer ${secret:token}"),
                ),
        )
        .secret_from_file("token", canonical(&dir.join("token")))
        .kv(KvBuilder::new("every")
            .max_key(ByteSize(256))
            .max_value(ByteSize(128 << 10))
            .max_keys(50)
            .bucket("state", BucketMode::Rw))
        .capability_global("tools")
        .capability(
            "lookup",
            CapabilityBuilder::new()
                .max_calls(3)
                .max_payload(ByteSize(4 << 10))
                .max_response(ByteSize(8 << 10))
                .schema(serde_json::json!({
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "integer", "minimum": 1}}
                })),
        )
        .capability(
            "notify",
            CapabilityBuilder::new().forward("http://127.0.0.1:9000/notify"),
        )
        .config("region", "eu")
        .config("tier", "gold")
        .mount(canonical(&dir.join("mount")), "/data", MountMode::Rw)
        .mount_quota(ByteSize(1 << 20), 20)
        .scratch(
            ScratchBuilder::new("/scratch")
                .quota(ByteSize(2 << 20))
                .max_files(30)
                .seed(canonical(&dir.join("seed.txt"))),
        )
        .fixed_clock(UNIX_EPOCH + Duration::from_secs(1_704_164_645))
        .seed(42)
        .overrides(
            OverridesBuilder::new()
                .timeout(Duration::from_secs(10))
                .fuel(999_999_999)
                .memory(ByteSize(256 << 20))
                .now(true)
                .seed(true)
                .config("region")
                .config("tier"),
        );
    let built = builder
        .build()
        .unwrap_or_else(|e| panic!("{e}\n{}", builder.to_toml()));
    let from_json = Policy::from_json(&every.json, None).unwrap_or_else(|e| panic!("{e}"));

    // The same policy, table for table (the resolved text lists every key of every table)…
    let resolved = from_toml.to_string();
    // The resolved text lists `[overrides]` too (it is left out only when it is empty).
    assert!(resolved.contains("[overrides]"), "{resolved}");
    assert!(resolved.contains("999999999"), "{resolved}");
    assert_eq!(built.to_string(), resolved);
    assert_eq!(from_json.to_string(), resolved);
    assert_eq!(built.limits(), from_toml.limits());
    assert_eq!(from_json.http(), from_toml.http());
    assert_eq!(built.http(), from_toml.http());
    assert_eq!(built.capabilities(), from_toml.capabilities());
    assert_eq!(built.determinism(), from_toml.determinism());
    assert!(built.grants_imports() && from_json.grants_imports());
    // …and each names the text it came from: the builder's TOML read as a file is the same
    // policy, SHA-256 included; a JSON policy's SHA-256 is that of its JSON text.
    assert_eq!(Policy::from_toml(&builder.to_toml(), None).unwrap(), built);
    assert_eq!(built.sha256().len(), 64);
    assert_eq!(
        Policy::from_json(&every.json, None).unwrap().sha256(),
        from_json.sha256()
    );
    assert_ne!(from_json.sha256(), from_toml.sha256());
    // The JSON form of the policy is itself valid against the schema.
    let json: serde_json::Value = serde_json::from_str(&every.json).unwrap();
    assert_eq!(
        schema_errors(&schema_validator(), &json),
        Vec::<String>::new()
    );
}

#[test]
fn code_made_policies_are_checked_like_files() {
    // The builder runs the file's checks: the key path and the same message, no line.
    let err = Policy::builder("small")
        .memory(ByteSize(1 << 20))
        .build()
        .unwrap_err();
    let from_file = Policy::from_toml("[limits]\nmemory = \"1MiB\"\n", None).unwrap_err();
    assert_eq!((err.key.as_str(), err.line), ("limits.memory", None));
    assert_eq!(err.message, from_file.message);

    let err = Policy::builder("kv")
        .kv(KvBuilder::new("ns").bucket("a", BucketMode::Ro))
        .http(HttpBuilder::new().allow(HttpRuleBuilder::new("ftp://example.com/")))
        .build()
        .unwrap_err();
    assert_eq!(err.key, "http.allow[0].url", "{err}");
    let err = Policy::builder("rate")
        .http(HttpBuilder::new().rate(5, Duration::from_secs(7)))
        .build()
        .unwrap_err();
    assert_eq!(err.key, "http.rate", "{err}");
    let err = Policy::builder("schema")
        .capability(
            "x",
            CapabilityBuilder::new().schema(serde_json::json!({"default": null})),
        )
        .build()
        .unwrap_err();
    assert_eq!(err.key, "capabilities.allow.x.schema", "{err}");

    // JSON: parse errors have a place; unknown keys, nulls and bad values name the key.
    let err = Policy::from_json("{\"limits\": {", None).unwrap_err();
    assert_eq!(err.line, Some(1), "{err}");
    let err = Policy::from_json(r#"{"limits": {"fule": 10}}"#, None).unwrap_err();
    assert_eq!(err.key, "limits.fule", "{err}");
    assert!(err.message.contains("unknown field `fule`"), "{err}");
    let err = Policy::from_json(r#"{"limits": {"memory": 64}}"#, None).unwrap_err();
    assert_eq!(
        (err.key.as_str(), err.line),
        ("limits.memory", None),
        "{err}"
    );
    assert!(err.message.contains("no unit"), "{err}");
    let err = Policy::from_json(r#"{"kv": null}"#, None).unwrap_err();
    assert_eq!(err.key, "kv", "{err}");
    let err = Policy::from_json("[1]", None).unwrap_err();
    assert!(err.message.contains("JSON object"), "{err}");

    // After all that, policies from code still work.
    let ok = Policy::from_json(r#"{"name": "ok", "limits": {"fuel": 5000000}}"#, None).unwrap();
    assert_eq!((ok.name(), ok.limits().fuel), ("ok", 5_000_000));
    let built = Policy::builder("ok").fuel(5_000_000).build().unwrap();
    assert_eq!(built.limits(), ok.limits());
    let unnamed = Policy::from_json("{}", Some(Path::new("/etc/tenant.json"))).unwrap();
    assert_eq!(unnamed.name(), "tenant");
}

/// The first bucket written is `kv`'s default, in every form: JSON objects and the builder
/// keep their order although neither is sorted that way.
#[test]
fn the_first_bucket_stays_the_default() {
    let toml = Policy::from_toml(
        "[kv]\nnamespace = \"n\"\n[kv.buckets]\nstate = \"rw\"\ncache = \"ro\"\n",
        None,
    )
    .unwrap();
    let json = Policy::from_json(
        r#"{"kv": {"namespace": "n", "buckets": {"state": "rw", "cache": "ro"}}}"#,
        None,
    )
    .unwrap();
    let builder = Policy::builder("b")
        .kv(KvBuilder::new("n")
            .bucket("state", BucketMode::Rw)
            .bucket("cache", BucketMode::Ro)
            .bucket("state", BucketMode::Rw))
        .build()
        .unwrap();
    for policy in [&toml, &json, &builder] {
        assert_eq!(policy.kv().unwrap().default_bucket, "state");
    }
    assert_eq!(json.to_string(), toml.to_string());
}
