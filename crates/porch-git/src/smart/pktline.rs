//! pkt-lines (gitprotocol-common): a 4-hex-digit length that counts itself, then data;
//! `0000` is a flush. Responses are parsed incrementally as HTTP body chunks arrive, so a
//! large pack streams into the object database instead of being buffered whole.

/// Longest pkt-line git sends or accepts (`LARGE_PACKET_MAX`).
pub(crate) const MAX_LEN: usize = 65520;

/// One parsed packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Packet {
    /// `0000`.
    Flush,
    /// Anything else (protocol v0 has no delimiter packets).
    Data(Vec<u8>),
}

/// Appends `data` as one pkt-line.
pub(crate) fn write(out: &mut Vec<u8>, data: &[u8]) {
    // Callers only write short commands; a longer line is a bug, not input.
    debug_assert!(data.len() + 4 <= MAX_LEN, "pkt-line too long");
    out.extend_from_slice(format!("{:04x}", data.len() + 4).as_bytes());
    out.extend_from_slice(data);
}

/// Appends a flush packet.
pub(crate) fn flush(out: &mut Vec<u8>) {
    out.extend_from_slice(b"0000");
}

/// Incremental pkt-line reader: feed bytes as they arrive, take packets out.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    buf: Vec<u8>,
    pos: usize,
}

impl Reader {
    /// Adds received bytes.
    pub(crate) fn feed(&mut self, data: &[u8]) {
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        } else if self.pos > MAX_LEN {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// The next complete packet; `Ok(None)` when more bytes are needed.
    pub(crate) fn next_packet(&mut self) -> Result<Option<Packet>, String> {
        let rest = &self.buf[self.pos..];
        if rest.len() < 4 {
            return Ok(None);
        }
        let len = parse_len(&rest[..4])?;
        if len == 0 {
            self.pos += 4;
            return Ok(Some(Packet::Flush));
        }
        if !(4..=MAX_LEN).contains(&len) {
            return Err(format!("invalid pkt-line length {len}"));
        }
        if rest.len() < len {
            return Ok(None);
        }
        let data = rest[4..len].to_vec();
        self.pos += len;
        Ok(Some(Packet::Data(data)))
    }

    /// Bytes received but not yet returned as packets (a truncated response leaves some).
    pub(crate) fn pending(&self) -> usize {
        self.buf.len() - self.pos
    }
}

fn parse_len(hex: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(hex).map_err(|_| bad_len(hex))?;
    usize::from_str_radix(text, 16).map_err(|_| bad_len(hex))
}

fn bad_len(hex: &[u8]) -> String {
    format!(
        "invalid pkt-line length {:?}",
        String::from_utf8_lossy(hex).escape_debug().to_string()
    )
}

/// `data` without one trailing newline, as text.
pub(crate) fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data.strip_suffix(b"\n").unwrap_or(data)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(r: &mut Reader) -> Vec<Packet> {
        let mut out = Vec::new();
        while let Some(p) = r.next_packet().expect("valid input") {
            out.push(p);
        }
        out
    }

    #[test]
    fn writes_lengths_that_count_themselves() {
        let mut out = Vec::new();
        write(&mut out, b"want abc\n");
        flush(&mut out);
        assert_eq!(out, b"000dwant abc\n0000");
    }

    #[test]
    fn reads_across_chunk_boundaries() {
        let mut r = Reader::default();
        let stream = b"000dwant abc\n00000006ok";
        for chunk in stream.chunks(3) {
            r.feed(chunk);
        }
        assert_eq!(
            all(&mut r),
            vec![
                Packet::Data(b"want abc\n".to_vec()),
                Packet::Flush,
                Packet::Data(b"ok".to_vec())
            ]
        );
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn keeps_a_partial_packet_pending() {
        let mut r = Reader::default();
        r.feed(b"0010short");
        assert_eq!(r.next_packet(), Ok(None));
        assert_eq!(r.pending(), 9);
    }

    #[test]
    fn rejects_garbage_lengths() {
        let mut r = Reader::default();
        r.feed(b"<htm");
        assert!(r.next_packet().is_err());
        let mut r = Reader::default();
        r.feed(b"0002");
        assert!(r.next_packet().is_err());
        let mut r = Reader::default();
        r.feed(b"fff5");
        assert!(r.next_packet().is_err());
    }

    #[test]
    fn text_strips_one_newline() {
        assert_eq!(text(b"unpack ok\n"), "unpack ok");
        assert_eq!(text(b"ng x y"), "ng x y");
    }
}
