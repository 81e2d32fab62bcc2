//! A bounded in-memory sink for a plugin's stdout and stderr: nothing reaches
//! the server's own stdio; what was written is logged after the call and a
//! panic message is put into the trap's text.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;

/// How much of a plugin's output is kept per call; the rest is dropped.
const CAPACITY: usize = 8 * 1024;

/// Cloneable handle: one clone goes into the WASI context, one stays with the
/// host to read what was written.
#[derive(Clone, Default)]
pub(crate) struct CapturedOutput {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl CapturedOutput {
    /// What was written so far, emptying the buffer (for reused instances).
    pub(crate) fn take_text(&self) -> String {
        match self.buffer.lock() {
            Ok(mut buffer) => String::from_utf8_lossy(&std::mem::take(&mut *buffer)).into_owned(),
            Err(_) => String::new(),
        }
    }

    fn append(&self, bytes: &[u8]) {
        if let Ok(mut buffer) = self.buffer.lock() {
            let room = CAPACITY.saturating_sub(buffer.len());
            buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }
}

impl AsyncWrite for CapturedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.append(buf);
        // Claims everything was written, so a chatty guest never blocks or errors.
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn keeps_at_most_the_capacity() {
        let out = CapturedOutput::default();
        let mut writer = out.clone();
        writer.write_all(&vec![b'x'; CAPACITY + 100]).await.unwrap();
        writer.write_all(b"more").await.unwrap();
        assert_eq!(out.take_text().len(), CAPACITY);
        assert!(out.take_text().is_empty());
    }
}
