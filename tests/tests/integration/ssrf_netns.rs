//! SSRF against real hosts and real DNS. The test makes its own network namespace (`ip netns`),
//! gives its loopback a "public" address (93.184.216.34, 2606:4700:4700::1111) and private ones
//! (10.99.0.2, fd00::2, 169.254.169.254), runs an HTTP host on each and a DNS server inside it,
//! and runs the real `palisade run` there in its own mount namespace, with a generated
//! `/etc/resolv.conf` and `/etc/hosts` bind-mounted over the machine's (which are never edited).
//! Every connection and every DNS question is logged inside the namespace: the test asserts the
//! exact refusal for each attempt and that nothing the policy forbids was ever reached.
//!
//! Needs root (CI runs as root); when `ip netns add` is refused the test says so and skips.

use crate::cli::palisade_bin;
use crate::support::scratch_dir;
use serde_json::{Value, json};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PUBLIC4: &str = "93.184.216.34";
const PUBLIC6: &str = "2606:4700:4700::1111";
const PRIVATE4: &str = "10.99.0.2";
const PRIVATE6: &str = "fd00::2";
const METADATA: &str = "169.254.169.254";
const NAMESERVER: &str = "10.99.0.53";
/// Every address an HTTP host listens on (port 80), public first.
const HOSTS: [&str; 7] = [
    PUBLIC4,
    PUBLIC6,
    PRIVATE4,
    PRIVATE6,
    METADATA,
    "127.0.0.1",
    "::1",
];

/// A network namespace of this test process, deleted on drop (a failing test included).
struct Netns {
    name: String,
}

impl Netns {
    fn create() -> Option<Netns> {
        let name = format!("palisade-ssrf-{}", std::process::id());
        match Command::new("ip").args(["netns", "add", &name]).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                eprintln!(
                    "SKIPPED ssrf_netns: `ip netns add` was refused ({}); these tests need root",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                return None;
            }
            Err(e) => {
                eprintln!("SKIPPED ssrf_netns: cannot run `ip` ({e}); install iproute2");
                return None;
            }
        }
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"]);
        for a in [PUBLIC4, PRIVATE4, METADATA, NAMESERVER] {
            ns.ip(&["addr", "add", &format!("{a}/32"), "dev", "lo"]);
        }
        for a in [PUBLIC6, PRIVATE6] {
            ns.ip(&[
                "-6",
                "addr",
                "add",
                &format!("{a}/128"),
                "dev",
                "lo",
                "nodad",
            ]);
        }
        Some(ns)
    }

    fn ip(&self, args: &[&str]) {
        let status = Command::new("ip")
            .arg("-n")
            .arg(&self.name)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "ip -n {} {args:?} failed", self.name);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// What the namespace saw: every TCP connection (by the address it reached), every HTTP request
/// (address, path) and every DNS question (name, type).
#[derive(Default)]
struct Seen {
    connections: Vec<IpAddr>,
    requests: Vec<(IpAddr, String)>,
    questions: Vec<(String, u16)>,
}

/// Where the hosts inside the namespace write what they see, one event a line.
struct Log(Mutex<std::fs::File>);

impl Log {
    fn write(&self, line: &str) {
        let mut file = self.0.lock().unwrap();
        file.write_all(format!("{line}\n").as_bytes()).unwrap();
        file.flush().unwrap();
    }
}

impl Seen {
    fn read(path: &Path) -> Seen {
        let mut seen = Seen::default();
        for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
            let parts: Vec<&str> = line.splitn(3, ' ').collect();
            match parts.as_slice() {
                ["conn", ip] => seen.connections.push(ip.parse().unwrap()),
                ["req", ip, path] => seen
                    .requests
                    .push((ip.parse().unwrap(), (*path).to_owned())),
                ["dns", name, qtype] => seen
                    .questions
                    .push(((*name).to_owned(), qtype.parse().unwrap())),
                _ => panic!("unexpected log line {line:?}"),
            }
        }
        seen
    }
}

/// The HTTP hosts and the DNS server: this test binary again, run inside the namespace as the
/// ignored test below. It stops when its stdin closes (or is killed on drop).
struct Inside {
    child: std::process::Child,
    log: PathBuf,
}

impl Inside {
    fn start(ns: &Netns, dir: &Path) -> Inside {
        let log = dir.join("seen.log");
        let ready = dir.join("ready");
        let child = Command::new("ip")
            .args(["netns", "exec", &ns.name])
            .arg(std::env::current_exe().unwrap())
            .args([
                "ssrf_netns::hosts_inside_the_namespace",
                "--exact",
                "--ignored",
                "--test-threads=1",
            ])
            .env(INSIDE_DIR, dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut inside = Inside { child, log };
        for _ in 0..600 {
            if ready.exists() {
                return inside;
            }
            if let Some(status) = inside.child.try_wait().unwrap() {
                panic!("the hosts inside the namespace exited early: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the hosts inside the namespace did not start within 30 s");
    }

    /// Stop the hosts and read what they saw.
    fn stop(mut self) -> Seen {
        drop(self.child.stdin.take());
        for _ in 0..200 {
            if self.child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Seen::read(&self.log)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

const INSIDE_DIR: &str = "PALISADE_SSRF_NETNS_DIR";

/// Not a test of its own: the hosts that `Inside::start` runs inside the namespace. Without its
/// environment variable (a plain `--ignored` run) it returns at once.
#[test]
#[ignore = "run by ssrf_against_real_hosts_and_dns_in_a_network_namespace"]
fn hosts_inside_the_namespace() {
    let Some(dir) = std::env::var_os(INSIDE_DIR).map(PathBuf::from) else {
        return;
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("seen.log"))
        .unwrap();
    let log = Arc::new(Log(Mutex::new(file)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        for host in HOSTS {
            let ip: IpAddr = host.parse().unwrap();
            let listener = tokio::net::TcpListener::bind((ip, 80)).await.unwrap();
            tokio::spawn(serve_http(listener, log.clone()));
        }
        let udp = tokio::net::UdpSocket::bind((NAMESERVER, 53)).await.unwrap();
        tokio::spawn(serve_dns(udp, log.clone()));
        std::fs::write(dir.join("ready"), "").unwrap();
        // Until the test closes stdin, at most five minutes.
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        let _ = tokio::time::timeout(Duration::from_secs(300), async {
            while !matches!(stdin.read(&mut buf).await, Ok(0) | Err(_)) {}
        })
        .await;
    });
}

/// A minimal HTTP/1.1 host: `/to-*` paths redirect (to an internal name, the metadata address,
/// a private IPv6 literal, an unlisted host), anything else answers 200 with the address reached.
async fn serve_http(listener: tokio::net::TcpListener, log: Arc<Log>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let local = stream.local_addr().unwrap().ip();
        log.write(&format!("conn {local}"));
        let log = log.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            let read = tokio::time::timeout(Duration::from_secs(10), async {
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16384 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
            })
            .await;
            if read.is_err() {
                return;
            }
            let text = String::from_utf8_lossy(&head);
            let path = text.split(' ').nth(1).unwrap_or("").to_owned();
            log.write(&format!("req {local} {path}"));
            let location = match path.as_str() {
                "/to-internal" => Some("http://internal.test/"),
                "/to-metadata" => Some("http://169.254.169.254/latest/"),
                "/to-v6" => Some("http://[fd00::2]/"),
                "/to-elsewhere" => Some("http://unlisted.test/"),
                _ => None,
            };
            let response = match location {
                Some(to) => format!(
                    "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                ),
                None => {
                    let body = local.to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    )
                }
            };
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

enum Data {
    A(Ipv4Addr),
    Aaaa(Ipv6Addr),
    Cname(&'static str),
}

const TYPE_A: u16 = 1;
const TYPE_CNAME: u16 = 5;
const TYPE_AAAA: u16 = 28;

/// The zone. `rebind.test` answers public on its first A question and private after.
fn records(name: &str, rebinds: &mut u32) -> Option<Vec<Data>> {
    let a = |s: &str| Data::A(s.parse().unwrap());
    let aaaa = |s: &str| Data::Aaaa(s.parse().unwrap());
    Some(match name {
        "public.test" => vec![a(PUBLIC4)],
        "v6public.test" => vec![aaaa(PUBLIC6)],
        "private.test" | "internal.test" => vec![a(PRIVATE4)],
        "v6private.test" => vec![aaaa(PRIVATE6)],
        "mixed.test" => vec![a(PUBLIC4), aaaa(PRIVATE6)],
        "mixed4.test" => vec![a(PUBLIC4), a(PRIVATE4)],
        "metadata.test" => vec![a(METADATA)],
        "cname.test" => vec![Data::Cname("hop.test")],
        "hop.test" => vec![Data::Cname("private.test")],
        "cname-public.test" => vec![Data::Cname("public.test")],
        "rebind.test" => {
            *rebinds += 1;
            vec![a(if *rebinds == 1 { PUBLIC4 } else { PRIVATE4 })]
        }
        _ => return None,
    })
}

fn encode_name(out: &mut Vec<u8>, name: &str) {
    for label in name.trim_end_matches('.').split('.') {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
}

/// The question of a query: name (lower-case), type, and where the question ends.
fn question(query: &[u8]) -> Option<(String, u16, usize)> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = *query.get(at)? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 {
            return None;
        }
        labels.push(String::from_utf8_lossy(query.get(at..at + len)?).to_ascii_lowercase());
        at += len;
    }
    let qtype = u16::from_be_bytes([*query.get(at)?, *query.get(at + 1)?]);
    query.get(at + 3)?;
    Some((labels.join("."), qtype, at + 4))
}

/// A DNS server for the zone above: CNAME chains are answered whole (as a recursive resolver
/// would), A and AAAA records only for their own type, unknown names with NXDOMAIN.
async fn serve_dns(socket: tokio::net::UdpSocket, log: Arc<Log>) {
    let mut buf = [0u8; 1500];
    let mut rebinds = 0;
    loop {
        let Ok((n, peer)) = socket.recv_from(&mut buf).await else {
            continue;
        };
        let query = &buf[..n];
        let Some((name, qtype, end)) = question(query) else {
            continue;
        };
        log.write(&format!("dns {name} {qtype}"));
        let mut answers: Vec<(String, Data)> = Vec::new();
        let mut nxdomain = false;
        let mut current = name.clone();
        for _ in 0..8 {
            let counted = if qtype == TYPE_A {
                &mut rebinds
            } else {
                &mut 0
            };
            let Some(data) = records(&current, counted) else {
                nxdomain = answers.is_empty();
                break;
            };
            let mut next = None;
            for d in data {
                match d {
                    Data::Cname(to) => {
                        next = Some(to.to_owned());
                        answers.push((current.clone(), Data::Cname(to)));
                    }
                    Data::A(_) if qtype == TYPE_A => answers.push((current.clone(), d)),
                    Data::Aaaa(_) if qtype == TYPE_AAAA => answers.push((current.clone(), d)),
                    _ => {}
                }
            }
            match next {
                Some(to) => current = to,
                None => break,
            }
        }
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(&query[0..2]);
        out.push(0x84 | (query[2] & 0x01)); // response, authoritative, recursion desired copied
        out.push(0x80 | if nxdomain { 3 } else { 0 }); // recursion available, rcode
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&query[12..end]);
        for (owner, data) in &answers {
            encode_name(&mut out, owner);
            let (rtype, rdata) = match data {
                Data::A(ip) => (TYPE_A, ip.octets().to_vec()),
                Data::Aaaa(ip) => (TYPE_AAAA, ip.octets().to_vec()),
                Data::Cname(to) => {
                    let mut r = Vec::new();
                    encode_name(&mut r, to);
                    (TYPE_CNAME, r)
                }
            };
            out.extend_from_slice(&rtype.to_be_bytes());
            out.extend_from_slice(&1u16.to_be_bytes());
            out.extend_from_slice(&0u32.to_be_bytes());
            out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            out.extend_from_slice(&rdata);
        }
        let _ = socket.send_to(&out, peer).await;
    }
}

const SCRIPT: &str = r#"
export default async () => {
  const out = [];
  for (const url of URLS) {
    try {
      const r = await fetch(url);
      out.push({ url, status: r.status, body: await r.text() });
    } catch (e) {
      out.push({ url, name: e.name, rule: e.rule ?? null });
    }
  }
  return out;
};
"#;

/// Every host a rule names: each resolves (or is) somewhere; only the public ones may be reached.
const POLICY: &str = r#"
name = "ssrf-netns"
[http]
timeout = "10s"
max_requests = 100
"#;

const ALLOWED: &[&str] = &[
    "http://public.test/",
    "http://v6public.test/",
    "http://cname-public.test/",
    "http://private.test/",
    "http://internal.test/",
    "http://hosts-private.test/",
    "http://v6private.test/",
    "http://mixed.test/",
    "http://mixed4.test/",
    "http://metadata.test/",
    "http://cname.test/",
    "http://rebind.test/",
    "http://169.254.169.254/",
    "http://[fd00::2]/",
    "http://[::1]/",
    "http://[::ffff:a63:2]/",
    "http://[2606:4700:4700::1111]/",
];

/// Run `palisade run` inside the namespace, with its own mount namespace in which the generated
/// resolver files cover the machine's.
fn run_inside(ns: &Netns, dir: &std::path::Path, urls: &[&str]) -> Value {
    std::fs::write(
        dir.join("resolv.conf"),
        format!("nameserver {NAMESERVER}\noptions timeout:2 attempts:2\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("hosts"),
        format!("127.0.0.1 localhost\n::1 localhost\n{PRIVATE4} hosts-private.test\n"),
    )
    .unwrap();
    let mut policy = POLICY.to_owned();
    for url in ALLOWED {
        policy.push_str(&format!("[[http.allow]]\nurl = \"{url}\"\n"));
    }
    std::fs::write(dir.join("policy.toml"), policy).unwrap();
    let script = SCRIPT.replace("URLS", &serde_json::to_string(urls).unwrap());
    std::fs::write(dir.join("ssrf.js"), script).unwrap();
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .args(["unshare", "--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount --bind \"$1/resolv.conf\" /etc/resolv.conf && \
             mount --bind \"$1/hosts\" /etc/hosts && \
             exec \"$2\" run \"$1/ssrf.js\" --policy \"$1/policy.toml\"",
        )
        .arg("sh")
        .arg(dir)
        .arg(palisade_bin())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

#[test]
fn ssrf_against_real_hosts_and_dns_in_a_network_namespace() {
    let Some(ns) = Netns::create() else {
        return;
    };
    let dir = scratch_dir("ssrf-netns");
    let inside = Inside::start(&ns, &dir);
    let urls = [
        "http://public.test/",
        "http://v6public.test/",
        "http://cname-public.test/",
        "http://[2606:4700:4700::1111]/",
        "http://rebind.test/",
        "http://rebind.test/",
        "http://private.test/",
        "http://hosts-private.test/",
        "http://v6private.test/",
        "http://mixed.test/",
        "http://mixed4.test/",
        "http://cname.test/",
        "http://metadata.test/",
        "http://169.254.169.254/latest/",
        "http://[fd00::2]/",
        "http://[::1]/",
        "http://[::ffff:10.99.0.2]/",
        "http://public.test/to-internal",
        "http://public.test/to-metadata",
        "http://public.test/to-v6",
        "http://public.test/to-elsewhere",
    ];
    let results = run_inside(&ns, &dir, &urls);
    let reached = |url: &str, ip: &str| json!({"url": url, "status": 200, "body": ip});
    let refused =
        |url: &str, rule: &str| json!({"url": url, "name": "PolicyDeniedError", "rule": rule});
    let expected = json!([
        reached("http://public.test/", PUBLIC4),
        reached("http://v6public.test/", PUBLIC6),
        reached("http://cname-public.test/", PUBLIC4),
        reached("http://[2606:4700:4700::1111]/", PUBLIC6),
        // Rebinding: public on the first answer (and the connection went there), private on
        // the second (refused before connecting).
        reached("http://rebind.test/", PUBLIC4),
        refused("http://rebind.test/", "http.private"),
        refused("http://private.test/", "http.private"),
        refused("http://hosts-private.test/", "http.private"),
        refused("http://v6private.test/", "http.private"),
        refused("http://mixed.test/", "http.private"),
        refused("http://mixed4.test/", "http.private"),
        refused("http://cname.test/", "http.private"),
        refused("http://metadata.test/", "http.private"),
        refused("http://169.254.169.254/latest/", "http.private"),
        refused("http://[fd00::2]/", "http.private"),
        refused("http://[::1]/", "http.private"),
        refused("http://[::ffff:10.99.0.2]/", "http.private"),
        refused("http://public.test/to-internal", "http.private"),
        refused("http://public.test/to-metadata", "http.private"),
        refused("http://public.test/to-v6", "http.private"),
        refused("http://public.test/to-elsewhere", "http.allow"),
    ]);
    let seen = inside.stop();
    assert_eq!(
        results, expected,
        "questions: {:?}\nrequests: {:?}",
        seen.questions, seen.requests
    );
    // Nothing the policy forbids was reached: every connection went to a public address.
    let public: [IpAddr; 2] = [PUBLIC4.parse().unwrap(), PUBLIC6.parse().unwrap()];
    let forbidden: Vec<&IpAddr> = seen
        .connections
        .iter()
        .filter(|ip| !public.contains(ip))
        .collect();
    assert!(forbidden.is_empty(), "reached {forbidden:?}");
    let p4: IpAddr = PUBLIC4.parse().unwrap();
    let p6: IpAddr = PUBLIC6.parse().unwrap();
    let requests: Vec<(IpAddr, &str)> = seen
        .requests
        .iter()
        .map(|(ip, path)| (*ip, path.as_str()))
        .collect();
    assert_eq!(
        requests,
        [
            (p4, "/"),
            (p6, "/"),
            (p4, "/"),
            (p6, "/"),
            (p4, "/"),
            (p4, "/to-internal"),
            (p4, "/to-metadata"),
            (p4, "/to-v6"),
            (p4, "/to-elsewhere"),
        ]
    );
    assert_eq!(seen.connections.len(), requests.len());
    // Palisade asked the namespace's DNS server (not the machine's), once per request: a
    // second lookup of the rebinding name would show here as a third A question.
    let a_questions = |name: &str| {
        seen.questions
            .iter()
            .filter(|(n, t)| n == name && *t == TYPE_A)
            .count()
    };
    assert_eq!(a_questions("rebind.test"), 2, "{:?}", seen.questions);
    assert_eq!(a_questions("public.test"), 5, "{:?}", seen.questions);
    assert_eq!(a_questions("cname.test"), 1, "{:?}", seen.questions);
    // The name in the generated /etc/hosts was answered from it, never asked of DNS.
    assert_eq!(a_questions("hosts-private.test"), 0, "{:?}", seen.questions);
    // The unlisted host was refused by its rule before any lookup.
    assert_eq!(a_questions("unlisted.test"), 0, "{:?}", seen.questions);
    drop(ns);
    let _ = std::fs::remove_dir_all(&dir);
}
