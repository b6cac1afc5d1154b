use crate::Policy;

/// The ceiling the cases below are held to.
const CEILING: &str = r#"
name = "ceiling"
[limits]
timeout = "2s"
memory = "128MiB"
[overrides]
timeout = "5s"
config = ["region"]
[http]
max_requests = 20
allow_private = ["127.0.0.0/8"]
allow = [
  { url = "https://*.example.com/api/", methods = ["GET", "HEAD", "POST"] },
  { url = "http://127.0.0.1:8080/" },
  { url = "https://tenant.example.org/", headers = { x-tenant = "acme" } },
]
deny = [{ url = "https://admin.example.com/" }]
[kv]
namespace = "app"
[kv.buckets]
state = "rw"
log = "ro"
[capabilities.allow.lookup]
max_calls = 5
[capabilities.allow.store]
schema = { type = "object" }
[fs.scratch]
guest = "/scratch"
quota = "1MiB"
"#;

fn within(inline: &str) -> Result<(), String> {
    let ceiling = Policy::from_toml(CEILING, None).unwrap();
    let policy = Policy::from_inline(inline, false)
        .map_err(|p| p.key)?
        .unwrap_or_else(|e| panic!("{inline}: {e}"));
    policy.within(&ceiling).map_err(|p| p.key)
}

#[test]
fn a_tighter_policy_is_within() {
    for inline in [
        "",
        "[limits]\ntimeout = \"2s\"\nmemory = \"64MiB\"\n[determinism]\nclock = \"real\"\n",
        "[config]\nanything = \"goes\"\n[overrides]\ntimeout = \"3s\"\nconfig = [\"region\"]\n",
        "[http]\nmax_requests = 3\ndeny = [{ url = \"https://admin.example.com/\" }]\n\
         allow = [{ url = \"https://a.example.com/api/v1/\" }, { url = \"http://127.0.0.1:8080/x\" }]\n\
         allow_private = [\"127.0.0.1/32\"]\n",
        "[http]\ndeny = [{ url = \"https://admin.example.com/\" }]\n\
         allow = [{ url = \"https://*.b.example.com/api/\", methods = [\"POST\"] }]\n",
        "[http]\ndeny = [{ url = \"https://admin.example.com/\" }]\n\
         allow = [{ url = \"https://tenant.example.org/v1/\", headers = { x-tenant = \"acme\" } }]\n",
        "[kv]\nnamespace = \"app\"\n[kv.buckets]\nlog = \"ro\"\nstate = \"ro\"\n",
        "[capabilities.allow.lookup]\nmax_calls = 2\nschema = { type = \"string\" }\n\
         [capabilities.allow.store]\nschema = { type = \"object\" }\n",
        "[fs.scratch]\nguest = \"/tmp\"\nquota = \"512KiB\"\n",
    ] {
        assert_eq!(within(inline), Ok(()), "{inline}");
    }
}

#[test]
fn each_grant_past_the_ceiling_is_named_by_its_key() {
    for (inline, key) in [
        ("[limits]\ntimeout = \"3s\"\n".to_owned(), "limits.timeout"),
        ("[limits]\nstack = \"16MiB\"\n".to_owned(), "limits.stack"),
        (
            "[overrides]\ntimeout = \"6s\"\n".to_owned(),
            "overrides.timeout",
        ),
        ("[overrides]\nseed = true\n".to_owned(), "overrides.seed"),
        (
            "[determinism]\nclock = \"fixed\"\n".to_owned(),
            "determinism.clock",
        ),
        (
            "[determinism]\nclock = \"fixed\"\ninstant = \"2030-01-01T00:00:00Z\"\n".to_owned(),
            "determinism.clock",
        ),
        ("[determinism]\nseed = 7\n".to_owned(), "determinism.seed"),
        (
            "[overrides]\nconfig = [\"zone\"]\n".to_owned(),
            "overrides.config",
        ),
        (
            "[kv]\nnamespace = \"other\"\n[kv.buckets]\nstate = \"rw\"\n".to_owned(),
            "kv.namespace",
        ),
        (
            "[kv]\nnamespace = \"app\"\n[kv.buckets]\nlog = \"rw\"\n".to_owned(),
            "kv.buckets.log",
        ),
        (
            "[kv]\nnamespace = \"app\"\n[kv.buckets]\nnew = \"ro\"\n".to_owned(),
            "kv.buckets.new",
        ),
        (
            "[capabilities.allow.delete]\n".to_owned(),
            "capabilities.allow.delete",
        ),
        (
            "[capabilities.allow.lookup]\nmax_calls = 6\n".to_owned(),
            "capabilities.allow.lookup.max_calls",
        ),
        (
            "[capabilities.allow.store]\n".to_owned(),
            "capabilities.allow.store.schema",
        ),
        (
            "[capabilities.allow.lookup]\nmax_calls = 1\nforward = \"http://127.0.0.1:9000/do\"\n"
                .to_owned(),
            "capabilities.allow.lookup.forward",
        ),
        (
            "[fs.scratch]\nguest = \"/s\"\nquota = \"2MiB\"\n".to_owned(),
            "fs.scratch.quota",
        ),
    ] {
        assert_eq!(within(&inline), Err(key.to_owned()), "{inline}");
    }
}

#[test]
fn each_http_grant_past_the_ceiling_is_named_by_its_key() {
    let deny = "deny = [{ url = \"https://admin.example.com/\" }]\n";
    for (inline, key) in [
        (
            format!("[http]\n{deny}allow = [{{ url = \"https://evil.com/\" }}]\n"),
            "http.allow",
        ),
        (
            format!("[http]\n{deny}allow = [{{ url = \"https://example.com/api/\" }}]\n"),
            "http.allow",
        ),
        (
            format!("[http]\n{deny}allow = [{{ url = \"https://*.example.com/\" }}]\n"),
            "http.allow",
        ),
        (
            format!(
                "[http]\n{deny}allow = [{{ url = \"https://a.example.com/api/\", methods = [\"DELETE\"] }}]\n"
            ),
            "http.allow",
        ),
        (
            format!(
                "[http]\n{deny}allow = [{{ url = \"https://a.example.com/api/\", headers = {{ x = \"1\" }} }}]\n"
            ),
            "http.allow",
        ),
        (
            "[http]\nallow = [{ url = \"https://a.example.com/api/\" }]\n".to_owned(),
            "http.deny",
        ),
        // The ceiling's rule for this host injects `x-tenant`: leaving it out, or sending
        // another value, is past it.
        (
            format!("[http]\n{deny}allow = [{{ url = \"https://tenant.example.org/\" }}]\n"),
            "http.allow",
        ),
        (
            format!(
                "[http]\n{deny}allow = [{{ url = \"https://tenant.example.org/\", headers = {{ x-tenant = \"other\" }} }}]\n"
            ),
            "http.allow",
        ),
        (
            format!(
                "[http]\n{deny}allow = [{{ url = \"https://tenant.example.org/\", headers = {{ x-tenant = \"acme\", x-more = \"1\" }} }}]\n"
            ),
            "http.allow",
        ),
        (
            format!("[http]\n{deny}max_requests = 21\n"),
            "http.max_requests",
        ),
        (format!("[http]\n{deny}rate = \"5/s\"\n"), "http.rate"),
        (
            format!("[http]\n{deny}allow_private = [\"10.0.0.0/8\"]\n"),
            "http.allow_private",
        ),
    ] {
        assert_eq!(within(&inline), Err(key.to_owned()), "{inline}");
    }
}

#[test]
fn a_ceiling_without_the_table_refuses_it_whole() {
    let ceiling = Policy::builtin_default();
    for (inline, key) in [
        (
            "[http]\nallow = [{ url = \"https://example.com/\" }]\n",
            "http",
        ),
        ("[kv]\nnamespace = \"x\"\n[kv.buckets]\na = \"ro\"\n", "kv"),
        ("[capabilities.allow.a]\n", "capabilities"),
        ("[fs.scratch]\nguest = \"/s\"\n", "fs.scratch"),
    ] {
        let policy = Policy::from_toml(inline, None).unwrap();
        let refused = policy.within(&ceiling).unwrap_err();
        assert_eq!(refused.key, key, "{inline}");
        assert!(
            refused.fits.is_null(),
            "{inline}: the fit is to leave it out"
        );
    }
}

#[test]
fn the_fit_is_the_ceilings_value() {
    let ceiling = Policy::from_toml(CEILING, None).unwrap();
    let policy = Policy::from_toml("[limits]\ntimeout = \"9s\"\n", None).unwrap();
    let refused = policy.within(&ceiling).unwrap_err();
    assert_eq!(refused.fits, serde_json::json!("2s"));
    assert!(refused.reason.contains("9s"), "{}", refused.reason);
}

#[test]
fn keys_that_read_the_host_are_refused_before_they_are_read() {
    for (inline, json, key) in [
        ("[secrets]\nTOKEN = { env = \"HOME\" }\n", false, "secrets"),
        (
            "{\"secrets\": {\"T\": {\"file\": \"/etc/passwd\"}}}",
            true,
            "secrets",
        ),
        (
            "[http]\nca_file = \"/etc/ssl/x.pem\"\n",
            false,
            "http.ca_file",
        ),
        (
            "[[fs.mount]]\nhost = \"/\"\nguest = \"/root\"\n",
            false,
            "fs.mount",
        ),
        (
            "[fs.scratch]\nguest = \"/s\"\nseed = [\"/etc\"]\n",
            false,
            "fs.scratch.seed",
        ),
    ] {
        let refused = Policy::from_inline(inline, json).unwrap_err();
        assert_eq!(refused.key, key, "{inline}");
    }
    let json = Policy::from_inline("{\"limits\": {\"timeout\": \"1s\"}}", true)
        .unwrap()
        .unwrap();
    assert_eq!(json.name(), "inline");
    assert_eq!(
        json.sha256(),
        crate::hex::sha256(b"{\"limits\": {\"timeout\": \"1s\"}}")
    );
}

#[test]
fn an_inline_policy_is_metered_in_its_ceilings_bucket() {
    let ceiling = Policy::from_toml(CEILING, None).unwrap();
    let policy = Policy::from_toml("", None).unwrap().metered_as(&ceiling);
    assert_eq!(policy.rate_key(), ceiling.sha256());
    assert_ne!(policy.sha256(), ceiling.sha256());
}

/// A clock and a seed of the inline policy's own are past a ceiling that does not let a call
/// choose them, and within one that does (`overrides.now`, `overrides.seed`); a ceiling with a
/// fixed clock keeps it.
#[test]
fn a_clock_or_seed_is_free_only_where_a_call_could_set_it() {
    let free = Policy::from_toml(
        "name = \"free\"\n[overrides]\nnow = true\nseed = true\n",
        None,
    )
    .unwrap();
    let fixed = Policy::from_toml(
        "name = \"fixed\"\n[determinism]\nclock = \"fixed\"\ninstant = \"2030-01-01T00:00:00Z\"\n",
        None,
    )
    .unwrap();
    let own = "[determinism]\nclock = \"fixed\"\ninstant = \"2031-01-01T00:00:00Z\"\nseed = 3\n";
    let policy = |text: &str| Policy::from_inline(text, false).unwrap().unwrap();
    assert_eq!(policy(own).within(&free), Ok(()));
    let real = policy("[determinism]\nclock = \"real\"\n");
    let past = real.within(&fixed).unwrap_err();
    assert_eq!(past.key, "determinism.clock");
    assert_eq!(past.fits, serde_json::json!("fixed"));
    assert_eq!(
        policy(own).within(&fixed).unwrap_err().key,
        "determinism.clock"
    );
    let same = "[determinism]\nclock = \"fixed\"\ninstant = \"2030-01-01T00:00:00Z\"\n";
    assert_eq!(policy(same).within(&fixed), Ok(()));
}
