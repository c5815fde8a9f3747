//! Minimal HTTP/1.1 request parsing and CGI response forwarding for the git shim.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};

/// A parsed request (body fully read and de-chunked).
pub(crate) struct Request {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// Reads the request head; the body is read by [`read_body`] after auth is checked.
pub(crate) fn read_head<R: Read>(reader: &mut BufReader<R>) -> io::Result<Request> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default().to_owned();
    if method.is_empty() || target.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "empty request line",
        ));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (target, String::new()),
    };
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 {
            break;
        }
        let h = h.trim_end_matches(['\r', '\n']);
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    Ok(Request {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    })
}

/// Reads the body by Content-Length or chunked transfer encoding.
pub(crate) fn read_body<R: Read, W: Write>(
    req: &mut Request,
    reader: &mut BufReader<R>,
    writer: &mut W,
) -> io::Result<()> {
    if req
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        writer.flush()?;
    }
    if req
        .header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size_line = String::new();
            reader.read_line(&mut size_line)?;
            let size_hex = size_line.trim().split(';').next().unwrap_or("0");
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            if size == 0 {
                // Trailer section ends with an empty line.
                loop {
                    let mut t = String::new();
                    if reader.read_line(&mut t)? == 0 || t.trim().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = req.body.len();
            req.body.resize(start + size, 0);
            reader.read_exact(&mut req.body[start..])?;
            let mut crlf = [0u8; 2];
            reader.read_exact(&mut crlf)?;
        }
    } else if let Some(len) = req
        .header("content-length")
        .and_then(|l| l.parse::<usize>().ok())
    {
        req.body.resize(len, 0);
        reader.read_exact(&mut req.body)?;
    }
    Ok(())
}

/// Splits CGI output into its header block and body.
fn split_cgi(cgi_out: &[u8]) -> (&[u8], &[u8]) {
    let split = cgi_out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            cgi_out
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })
        .unwrap_or((cgi_out.len(), cgi_out.len()));
    (&cgi_out[..split.0], &cgi_out[split.1..])
}

/// CGI output with its body replaced by `f(body)` (fault injection).
pub(crate) fn map_cgi_body(cgi_out: &[u8], f: impl FnOnce(&[u8]) -> Vec<u8>) -> Vec<u8> {
    let (head, body) = split_cgi(cgi_out);
    let mut out = head.to_vec();
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(&f(body));
    out
}

/// Copies a complete CGI response (headers, blank line, body) to the client as HTTP/1.1,
/// with a Content-Length (libgit2's HTTP client does not accept close-delimited bodies).
pub(crate) fn forward_cgi<W: Write>(cgi_out: &[u8], client: &mut W) -> io::Result<()> {
    let (head, body) = split_cgi(cgi_out);
    let mut status = "200 OK".to_owned();
    let mut headers = Vec::new();
    for h in String::from_utf8_lossy(head).lines() {
        let h = h.trim_end_matches('\r');
        match h.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            Some((k, _)) if k.eq_ignore_ascii_case("content-length") => {}
            Some(_) => headers.push(h.to_owned()),
            None => {}
        }
    }
    let mut out = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        out.push_str(&h);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    client.write_all(out.as_bytes())?;
    client.write_all(body)?;
    client.flush()
}

/// Writes a short plain response.
pub(crate) fn respond<W: Write>(
    client: &mut W,
    status: &str,
    extra: &[&str],
    body: &str,
) -> io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in extra {
        head.push_str(h);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    client.write_all(head.as_bytes())?;
    client.write_all(body.as_bytes())?;
    client.flush()
}

/// Standard base64 decoding (for `Authorization: Basic`).
pub(crate) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    }
    let bytes: Vec<u8> = s.bytes().filter(|b| *b != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            acc |= val(*c)? << (18 - 6 * i);
        }
        let n = chunk.len();
        out.push((acc >> 16) as u8);
        if n > 2 {
            out.push((acc >> 8) as u8);
        }
        if n > 3 {
            out.push(acc as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_base64() {
        assert_eq!(
            base64_decode("dXNlcjpwYXNz").expect("test value"),
            b"user:pass"
        );
        assert_eq!(
            base64_decode("bmVwaGlvOnNlY3JldA==").expect("test value"),
            b"nephio:secret"
        );
    }

    #[test]
    fn parses_chunked_body() {
        let raw = b"POST /r.git/git-upload-pack HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let mut reader = BufReader::new(&raw[..]);
        let mut req = read_head(&mut reader).expect("test value");
        let mut sink = Vec::new();
        read_body(&mut req, &mut reader, &mut sink).expect("test value");
        assert_eq!(req.path, "/r.git/git-upload-pack");
        assert_eq!(req.body, b"abcde");
    }
}
