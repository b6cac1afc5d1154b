//! The server soak's policies and keys file: what a server it drives must load
//! (`palisade soak --server-setup DIR` writes them for a server started by hand).

use std::path::Path;

/// The soak's policies, by file name: plain limits, a short deadline, a small stack, and a
/// session's scratch directory with a small quota.
pub const POLICIES: &[(&str, &str)] = &[
    (
        "soak-plain.toml",
        "name = \"soak-plain\"\n[limits]\nmemory = \"16MiB\"\nfuel = 200_000_000\ntimeout = \"60s\"\n",
    ),
    (
        "soak-deadline.toml",
        "name = \"soak-deadline\"\n[limits]\nfuel = 1_000_000_000_000\ntimeout = \"200ms\"\n",
    ),
    (
        "soak-recursion.toml",
        "name = \"soak-recursion\"\n[limits]\nstack = \"1MiB\"\nfuel = 1_000_000_000\ntimeout = \"60s\"\n",
    ),
    (
        "soak-box.toml",
        "name = \"soak-box\"\n[limits]\ntimeout = \"60s\"\n[fs.scratch]\nguest = \"/scratch\"\n\
         quota = \"64KiB\"\nmax_files = 20\n[kv]\nnamespace = \"app\"\n[kv.buckets]\nstate = \"rw\"\n",
    ),
];

/// The keys file: the tenant `soak`, whose key is `soak-key` (`printf %s soak-key | sha256sum`),
/// with the soak's policies.
const KEYS: &str = "[[tenant]]\nname = \"soak\"\n\
    key_sha256 = \"4dd069bee50104e4f4abb22e8f40964c3a5bb3db0fcc01e236cc120a12ea6400\"\n\
    policies = [\"soak-plain\", \"soak-deadline\", \"soak-recursion\", \"soak-box\"]\n";

/// Write `DIR/policies/*.toml` and `DIR/keys.toml`.
pub fn write_setup(dir: &Path) -> Result<(), String> {
    let policies = dir.join("policies");
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(&policies)
        .map_err(|e| format!("cannot create {}: {e}", policies.display()))?;
    for (name, text) in POLICIES {
        write(&policies.join(name), text)?;
    }
    write(&dir.join("keys.toml"), KEYS)
}
