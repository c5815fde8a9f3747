//! Large response bodies handed to hyper in slices.
//!
//! Over TLS hyper cannot write vectored, so it copies every body chunk into the
//! connection's write buffer, and that buffer keeps its largest size for as long as the
//! connection lives: one 9 MiB list left 9 MiB on each kept-alive connection that served
//! it. Handing hyper the same bytes in slices of [`SLICE`] (zero-copy `Bytes` views) keeps
//! the buffer small; the exact size hint keeps `Content-Length`.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http_body::{Frame, SizeHint};

/// Largest slice handed to hyper at once.
pub const SLICE: usize = 64 * 1024;

/// A body of `bytes`, yielded in slices of at most [`SLICE`] bytes.
pub fn sliced(bytes: impl Into<Bytes>) -> Body {
    let bytes = bytes.into();
    if bytes.len() <= SLICE {
        return Body::from(bytes);
    }
    Body::new(Sliced { rest: bytes })
}

struct Sliced {
    rest: Bytes,
}

impl http_body::Body for Sliced {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.rest.is_empty() {
            return Poll::Ready(None);
        }
        let n = self.rest.len().min(SLICE);
        let slice = self.rest.split_to(n);
        Poll::Ready(Some(Ok(Frame::data(slice))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn slices_keep_every_byte_and_the_exact_length() {
        let data: Vec<u8> = (0..SLICE * 3 + 17).map(|i| (i % 251) as u8).collect();
        let body = sliced(data.clone());
        assert_eq!(
            http_body::Body::size_hint(&body).exact(),
            Some(data.len() as u64)
        );
        let mut body = body;
        let mut frames = 0;
        let mut got = Vec::new();
        while let Some(frame) = body.frame().await {
            let chunk = frame.expect("frame").into_data().expect("data");
            assert!(chunk.len() <= SLICE);
            got.extend_from_slice(&chunk);
            frames += 1;
        }
        assert_eq!(frames, 4);
        assert_eq!(got, data);
    }

    #[tokio::test]
    async fn small_bodies_are_one_chunk() {
        let body = sliced(b"{}".to_vec());
        let bytes = body.collect().await.expect("collect").to_bytes();
        assert_eq!(&bytes[..], b"{}");
    }
}
