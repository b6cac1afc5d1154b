//! HTTPS to internal services: a CA the policy names (`[http] ca_file`), on a local TLS server
//! whose certificate authority the test makes.

use crate::support::*;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A TLS server on 127.0.0.1 answering `ok` to every request, with a certificate for
/// `localhost` signed by a CA made here; returns its port and the CA's PEM. It stops with the
/// test's runtime.
async fn tls_server() -> (u16, String) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![leaf.der().clone()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        // At most a few connections, each answered once.
        for _ in 0..8 {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (port, ca_cert.pem())
}

/// Issue 25: `[http] ca_file` adds a CA for internal HTTPS services; without it the same server
/// is refused as a certificate error.
#[tokio::test]
async fn a_policy_ca_file_trusts_an_internal_https_service() {
    let (port, ca) = tls_server().await;
    let dir = scratch_dir("tls-ca");
    std::fs::write(dir.join("internal-ca.pem"), &ca).unwrap();
    let rule = format!(
        "allow_private_hosts = [\"localhost\"]\n[[http.allow]]\nurl = \"https://localhost:{port}/\"\n"
    );
    let source = format!(
        r#"export default async () => {{
          try {{ return await (await fetch("https://localhost:{port}/hello")).text(); }}
          catch (e) {{ return e.code ?? e.name; }}
        }};"#
    );
    let script = palisade::Script::new("tls.js", source);
    let without = policy(&format!("[http]\n{rule}"));
    let outcome = PALISADE.run(&without, &script, "null").await;
    assert_eq!(output(&outcome), r#""tls""#);
    let path = dir.join("p.toml");
    std::fs::write(
        &path,
        format!("[http]\nca_file = \"internal-ca.pem\"\n{rule}"),
    )
    .unwrap();
    let with = palisade::Policy::from_file(&path).unwrap();
    let outcome = PALISADE.run(&with, &script, "null").await;
    assert_eq!(output(&outcome), r#""ok""#);
    // A file that is not PEM certificates is refused when the policy is loaded.
    std::fs::write(dir.join("internal-ca.pem"), "not a certificate").unwrap();
    let error = palisade::Policy::from_file(&path).unwrap_err();
    assert_eq!(error.key, "http.ca_file");
    assert_next_call_works().await;
}
