//! Bodies: request and response bytes counted against the call's budgets, and responses
//! decoded (gzip, deflate) on the host so that the budgets count decoded bytes.

use super::*;

/// A response body as a byte reader, for the decompressors.
pub(super) fn body_reader(body: WasiBody) -> impl tokio::io::AsyncBufRead + Send {
    let stream = http_body_util::BodyDataStream::new(body);
    let stream = IoErrors(stream);
    tokio_util::io::StreamReader::new(stream)
}

/// Body errors as I/O errors, for `StreamReader`.
pub(super) struct IoErrors(http_body_util::BodyDataStream<WasiBody>);

impl futures_core::Stream for IoErrors {
    type Item = Result<Bytes, std::io::Error>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.0)
            .poll_next(cx)
            .map(|item| item.map(|r| r.map_err(std::io::Error::other)))
    }
}

/// A decompressed body, read in bounded chunks so that a small compressed body cannot
/// expand into one huge allocation.
pub(super) struct Decoded {
    pub(super) reader: Pin<Box<dyn AsyncRead + Send>>,
}

pub(super) const DECODE_CHUNK: usize = 16 << 10;

impl Body for Decoded {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let mut buf = BytesMut::with_capacity(DECODE_CHUNK);
        match ready!(tokio_util::io::poll_read_buf(
            self.reader.as_mut(),
            cx,
            &mut buf
        )) {
            Ok(0) => Poll::Ready(None),
            Ok(_) => Poll::Ready(Some(Ok(Frame::data(buf.freeze())))),
            Err(e) => {
                let error = match e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) {
                    Some(_) => Error::ConnectionTerminated,
                    None => Error::HttpResponseContentCoding(Some(e.to_string())),
                };
                Poll::Ready(Some(Err(error)))
            }
        }
    }
}

/// A request body counted against the call's request byte budget.
pub(super) struct CountedRequest {
    pub(super) inner: WasiBody,
    pub(super) usage: Arc<Usage>,
    pub(super) sent: Arc<AtomicU64>,
    pub(super) limit: u64,
}

impl Body for CountedRequest {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            self.sent.fetch_add(data.len() as u64, Ordering::SeqCst);
            let total = self
                .usage
                .request_bytes
                .fetch_add(data.len() as u64, Ordering::SeqCst)
                + data.len() as u64;
            if total > self.limit {
                return Poll::Ready(Some(Err(Error::HttpRequestBodySize(Some(self.limit)))));
            }
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

/// A response body counted against the call's response byte budget and the request's
/// deadline; its audit record gets the byte count when the body ends or is dropped.
pub(super) struct CountedResponse {
    pub(super) inner: WasiBody,
    pub(super) usage: Arc<Usage>,
    pub(super) limit: u64,
    pub(super) deadline: Pin<Box<tokio::time::Sleep>>,
    pub(super) audit: AuditLog,
    pub(super) index: Option<usize>,
    pub(super) seen: u64,
    pub(super) done: bool,
    pub(super) slot: Slot,
}

impl Body for CountedResponse {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(self.as_mut().step(cx));
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    self.slot.body(data);
                }
            }
            Some(Err(error)) => self.slot.body_error(error),
            None => {}
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }
}

impl CountedResponse {
    fn step(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(frame) => frame,
            Poll::Pending => {
                ready!(self.deadline.as_mut().poll(cx));
                self.done = true;
                return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
            }
        };
        match &frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let n = data.len() as u64;
                    self.seen += n;
                    let total = self.usage.response_bytes.fetch_add(n, Ordering::SeqCst) + n;
                    if total > self.limit {
                        self.done = true;
                        return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(
                            self.limit,
                        )))));
                    }
                }
            }
            Some(Err(_)) | None => self.done = true,
        }
        Poll::Ready(frame)
    }
}

impl Drop for CountedResponse {
    fn drop(&mut self) {
        if let Some(index) = self.index {
            self.audit.add_bytes_out(index, self.seen);
        }
    }
}
