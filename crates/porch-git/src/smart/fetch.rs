//! Fetch over smart HTTP: the ref check and `git-upload-pack` with `done` in one request.

use std::collections::HashMap;

use git2::{Oid, Repository};

use super::http::Request;
use super::pktline::{self, Packet};
use super::{Session, SmartError, advert};
use crate::cli::Remote;

/// Most haves offered: branch tips are enough for Porch's layout (tags point at commits
/// on the registered branch), and the request stays small with many drafts.
const MAX_HAVES: usize = 256;

/// The remote's branches and tags (one `GET`); remembers upload-pack's capabilities.
pub(crate) fn ls_refs(
    session: &mut Session,
    remote: &Remote,
) -> Result<HashMap<String, Oid>, SmartError> {
    let advert = advert::get(session, remote, "git-upload-pack")?;
    session.upload_caps = Some(advert.caps);
    Ok(advert.refs)
}

/// Brings `refs` (remote name → advertised value, same names locally) into the mirror:
/// fetches the objects it lacks in one `POST git-upload-pack` offering `haves`, checks the
/// new tips arrived, then sets the local refs.
pub(crate) fn fetch(
    session: &mut Session,
    remote: &Remote,
    repo: &Repository,
    refs: &[(String, Oid)],
    haves: &[Oid],
) -> Result<(), SmartError> {
    let odb = repo.odb()?;
    let mut wants: Vec<Oid> = refs
        .iter()
        .map(|(_, oid)| *oid)
        .filter(|oid| !odb.exists(*oid))
        .collect();
    wants.sort();
    wants.dedup();
    if !wants.is_empty() {
        let caps = match &session.upload_caps {
            Some(c) => c.clone(),
            None => {
                ls_refs(session, remote)?;
                session.upload_caps.clone().unwrap_or_default()
            }
        };
        if !caps.has("side-band-64k") {
            return Err(SmartError::Protocol(
                "the server's upload-pack lacks side-band-64k".into(),
            ));
        }
        let body = request(&wants, haves, &caps);
        let mut writer = odb.packwriter()?;
        let mut response = Response::default();
        let head = session.client.exchange(
            remote,
            Request {
                method: "POST",
                url: format!("{}/git-upload-pack", session.base),
                content_type: Some("application/x-git-upload-pack-request"),
                accept: "application/x-git-upload-pack-result",
                body,
                auth: &remote.auth,
            },
            &mut |chunk| response.feed(chunk, &mut writer),
        )?;
        if head.content_type != "application/x-git-upload-pack-result" {
            return Err(SmartError::Protocol(format!(
                "unexpected content type {:?} for git-upload-pack",
                head.content_type
            )));
        }
        response.finish()?;
        writer
            .commit()
            .map_err(|e| SmartError::Protocol(format!("the received pack is invalid: {e}")))?;
        if let Some(missing) = wants.iter().find(|w| !odb.exists(**w)) {
            return Err(SmartError::Protocol(format!(
                "the server's pack lacks {missing}"
            )));
        }
        tracing::debug!(
            wants = wants.len(),
            haves = haves.len().min(MAX_HAVES),
            pack_bytes = response.pack_bytes,
            "fetched pack"
        );
    }
    for (name, oid) in refs {
        repo.reference(name, *oid, true, "porch fetch")?;
    }
    Ok(())
}

/// Wants (capabilities on the first), flush, haves, `done`.
fn request(wants: &[Oid], haves: &[Oid], caps: &advert::Caps) -> Vec<u8> {
    let mut requested = vec!["side-band-64k"];
    for c in ["ofs-delta", "thin-pack", "no-progress"] {
        if caps.has(c) {
            requested.push(c);
        }
    }
    let agent = format!("agent=porch-rs/{}", env!("CARGO_PKG_VERSION"));
    requested.push(&agent);
    let mut body = Vec::new();
    for (i, w) in wants.iter().enumerate() {
        let line = if i == 0 {
            format!("want {w} {}\n", requested.join(" "))
        } else {
            format!("want {w}\n")
        };
        pktline::write(&mut body, line.as_bytes());
    }
    pktline::flush(&mut body);
    for h in haves.iter().take(MAX_HAVES) {
        pktline::write(&mut body, format!("have {h}\n").as_bytes());
    }
    pktline::write(&mut body, b"done\n");
    body
}

/// upload-pack's answer: `ACK`/`NAK` lines, then the pack on side band 1, messages on 2,
/// a fatal error on 3, and a final flush.
#[derive(Default)]
struct Response {
    reader: pktline::Reader,
    pack_bytes: usize,
    done: bool,
}

impl Response {
    fn feed(&mut self, chunk: &[u8], pack: &mut impl std::io::Write) -> Result<(), SmartError> {
        self.reader.feed(chunk);
        while let Some(p) = self.reader.next_packet().map_err(SmartError::Protocol)? {
            if self.done {
                return Err(SmartError::Protocol("data after the final flush".into()));
            }
            let d = match p {
                Packet::Flush => {
                    self.done = true;
                    continue;
                }
                Packet::Data(d) => d,
            };
            match d.first() {
                Some(1) => {
                    pack.write_all(&d[1..]).map_err(|e| {
                        SmartError::Protocol(format!("the received pack is invalid: {e}"))
                    })?;
                    self.pack_bytes += d.len() - 1;
                }
                Some(2) => tracing::debug!(message = %pktline::text(&d[1..]), "remote"),
                Some(3) => {
                    return Err(SmartError::Unavailable(format!(
                        "the server failed: {}",
                        pktline::text(&d[1..])
                    )));
                }
                _ if d.starts_with(b"ACK ") || d.starts_with(b"NAK") => {}
                _ if d.starts_with(b"ERR ") => {
                    return Err(SmartError::Unavailable(format!(
                        "the server said: {}",
                        pktline::text(&d[4..])
                    )));
                }
                _ => {
                    return Err(SmartError::Protocol(format!(
                        "unexpected packet {:?}",
                        String::from_utf8_lossy(&d[..d.len().min(40)])
                    )));
                }
            }
        }
        Ok(())
    }

    fn finish(&self) -> Result<(), SmartError> {
        if !self.done || self.reader.pending() > 0 {
            return Err(SmartError::Protocol(
                "the pack ended early (truncated answer?)".into(),
            ));
        }
        if self.pack_bytes == 0 {
            return Err(SmartError::Protocol("the server sent no pack".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oid(c: char) -> Oid {
        Oid::from_str(&c.to_string().repeat(40)).expect("valid oid")
    }

    #[test]
    fn request_puts_capabilities_on_the_first_want() {
        let advert = advert::parse(
            &{
                let mut b = Vec::new();
                let l = format!("{} HEAD\0side-band-64k ofs-delta\n", "a".repeat(40));
                pktline::write(&mut b, l.as_bytes());
                pktline::flush(&mut b);
                b
            },
            "git-upload-pack",
        )
        .expect("valid advertisement");
        let body = request(&[oid('1'), oid('2')], &[oid('3')], &advert.caps);
        let text = String::from_utf8(body).expect("ascii");
        let first_len = usize::from_str_radix(&text[..4], 16).expect("hex length");
        assert!(text[4..first_len].starts_with(&format!(
            "want {} side-band-64k ofs-delta agent=porch-rs/",
            oid('1')
        )));
        assert!(text[..first_len].ends_with('\n'));
        assert!(text.contains(&format!("0032want {}\n0000", oid('2'))));
        assert!(text.ends_with(&format!("0032have {}\n0009done\n", oid('3'))));
    }

    #[test]
    fn response_demultiplexes_the_side_band() {
        let mut raw = Vec::new();
        pktline::write(&mut raw, b"NAK\n");
        pktline::write(&mut raw, b"\x02counting objects\n");
        pktline::write(&mut raw, b"\x01PACK-part-1");
        pktline::write(&mut raw, b"\x01-part-2");
        pktline::flush(&mut raw);
        let mut r = Response::default();
        let mut pack = Vec::new();
        for chunk in raw.chunks(5) {
            r.feed(chunk, &mut pack).expect("valid stream");
        }
        r.finish().expect("complete");
        assert_eq!(pack, b"PACK-part-1-part-2");
    }

    #[test]
    fn response_reports_errors_and_truncation() {
        let mut raw = Vec::new();
        pktline::write(&mut raw, b"NAK\n");
        pktline::write(&mut raw, b"\x01PACK");
        let mut r = Response::default();
        r.feed(&raw, &mut Vec::new()).expect("valid so far");
        let e = r.finish().expect_err("no final flush");
        assert!(e.to_string().contains("truncated"), "{e}");

        let mut raw = Vec::new();
        pktline::write(&mut raw, b"\x03upload-pack: not our ref 1234");
        let e = Response::default()
            .feed(&raw, &mut Vec::new())
            .expect_err("fatal band");
        assert!(e.to_string().contains("not our ref"), "{e}");

        let e = Response::default()
            .feed(b"HTTP/1.1 200 OK\r\n", &mut Vec::new())
            .expect_err("garbage");
        assert!(matches!(e, SmartError::Protocol(_)), "{e}");
    }
}
