//! Connections: TCP to a checked address, TLS with the webpki and system roots (and a
//! policy's CA file), and the mapping of I/O and hyper failures to `wasi:http` errors.

use super::*;

pub(super) trait Stream:
    tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin
{
}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Stream for T {}

pub(super) async fn connect(addresses: &[SocketAddr]) -> Result<TcpStream, Error> {
    let mut last = Error::ConnectionRefused;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = io_error(&e),
        }
    }
    Err(last)
}

pub(super) fn io_error(e: &std::io::Error) -> Error {
    use std::io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused => Error::ConnectionRefused,
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
            Error::ConnectionTerminated
        }
        TimedOut => Error::ConnectionTimeout,
        _ => Error::DestinationUnavailable,
    }
}

pub(super) fn hyper_error(e: hyper::Error) -> Error {
    // A request body over the budget fails inside hyper; report the budget, not the symptom.
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        if let Some(Error::HttpRequestBodySize(limit)) = cause.downcast_ref::<Error>() {
            return Error::HttpRequestBodySize(*limit);
        }
        source = cause.source();
    }
    if e.is_incomplete_message() || e.is_closed() || e.is_canceled() {
        return Error::ConnectionTerminated;
    }
    if e.is_timeout() {
        return Error::ConnectionReadTimeout;
    }
    let source_io = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<std::io::Error>());
    match source_io {
        Some(io) => io_error(io),
        None => Error::HttpProtocolError,
    }
}

/// The public roots built in (webpki-roots) and the system's certificate store, read once.
pub(super) fn base_roots() -> &'static rustls::RootCertStore {
    static ROOTS: std::sync::OnceLock<rustls::RootCertStore> = std::sync::OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let system = rustls_native_certs::load_native_certs();
        for error in &system.errors {
            tracing::warn!("the system certificate store: {error}");
        }
        let (added, ignored) = roots.add_parsable_certificates(system.certs);
        tracing::debug!(added, ignored, "system certificates trusted for https");
        roots
    })
}

pub(super) async fn tls(
    host: &str,
    stream: TcpStream,
    extra: Option<&crate::policy::CaFile>,
) -> Result<tokio_rustls::client::TlsStream<TcpStream>, Error> {
    use rustls::pki_types::ServerName;
    let mut roots = base_roots().clone();
    if let Some(extra) = extra {
        let certificates = extra
            .certificates
            .iter()
            .map(|der| rustls::pki_types::CertificateDer::from(der.clone()));
        roots.add_parsable_certificates(certificates);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| Error::TlsProtocolError)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let name = match bare.parse::<IpAddr>() {
        Ok(ip) => ServerName::from(ip),
        Err(_) => ServerName::try_from(bare.to_owned()).map_err(|_| Error::TlsProtocolError)?,
    };
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => Error::TlsCertificateError,
            _ => Error::TlsProtocolError,
        })
}

/// Resolve (and check), connect, speak TLS where the target asks for it, and send.
impl Outgoing {
    pub(super) async fn exchange(
        &self,
        request: http::Request<WasiBody>,
        deadline: tokio::time::Instant,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let addresses = self.resolve().await?;
        let stream = connect(&addresses).await?;
        let (parts, body) = request.into_parts();
        let mut request = http::Request::from_parts(parts, self.count_request_body(body));
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        *request.uri_mut() = http::Uri::builder()
            .path_and_query(path)
            .build()
            .map_err(|_| Error::HttpRequestUriInvalid)?;
        let headers = request.headers_mut();
        for (name, value) in &self.rule.headers {
            let value = http::HeaderValue::from_str(&value.value)
                .map_err(|_| Error::InternalError(Some("a policy header is not valid".into())))?;
            headers.insert(
                http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| Error::InternalError(None))?,
                value,
            );
        }
        headers.insert(
            http::header::ACCEPT_ENCODING,
            http::HeaderValue::from_static("gzip, deflate"),
        );

        let io: Box<dyn Stream> = if self.target.https {
            Box::new(tls(&self.target.host, stream, self.policy.ca_file.as_ref()).await?)
        } else {
            Box::new(stream)
        };
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(io))
                .await
                .map_err(hyper_error)?;
        let mut conn = Box::pin(conn);
        let mut conn_done = false;
        let send = sender.send_request(request);
        tokio::pin!(send);
        let response = loop {
            tokio::select! {
                response = &mut send => break response.map_err(hyper_error)?,
                done = &mut conn, if !conn_done => {
                    conn_done = true;
                    done.map_err(hyper_error)?;
                }
            }
        };
        let io: IoFuture = Box::new(async move {
            if !conn_done {
                conn.await.map_err(hyper_error)?;
            }
            Ok(())
        });
        let response = self.accept_response(response, deadline)?;
        Ok((response, io))
    }
}
