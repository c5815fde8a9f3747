//! Atomic compare-and-swap push over smart HTTP (`git-receive-pack`).

use git2::{Oid, Repository};

use super::advert::{self, Caps};
use super::http::Request;
use super::pktline::{self, Packet};
use super::{Session, SmartError, pack};
use crate::cli::{CONFLICT_MARKERS, RefUpdate, Remote};

/// Extra reasons receive-pack gives when a ref is not what the command said it was: the
/// ref transaction's own messages, and objects the remote no longer has (our view of it is
/// stale, so a sync and a retry can succeed).
const MORE_CONFLICT_MARKERS: [&str; 3] = [
    "cannot lock ref",
    "reference already exists",
    "missing necessary objects",
];

/// Pushes `updates` in one atomic request; `known` are commits the remote is known to
/// have (the pack leaves out everything they reach).
pub(crate) fn push(
    session: &mut Session,
    remote: &Remote,
    repo: &Repository,
    updates: &[RefUpdate],
    known: &[Oid],
) -> Result<(), SmartError> {
    let result = push_once(session, remote, repo, updates, known);
    if let Err(e) = &result
        && !matches!(e, SmartError::Conflict(_))
    {
        // Read the capabilities again next time: the server may have changed.
        session.receive_caps = None;
    }
    result
}

fn push_once(
    session: &mut Session,
    remote: &Remote,
    repo: &Repository,
    updates: &[RefUpdate],
    known: &[Oid],
) -> Result<(), SmartError> {
    let caps = match &session.receive_caps {
        Some(c) => c.clone(),
        None => {
            let caps = advert::get(session, remote, "git-receive-pack")?.caps;
            session.receive_caps = Some(caps.clone());
            caps
        }
    };
    let deletes_only = updates.iter().all(|u| u.new.is_none());
    let mut missing = vec![];
    if !caps.has("report-status") {
        missing.push("report-status");
    }
    if updates.len() > 1 && !caps.has("atomic") {
        missing.push("atomic");
    }
    if updates.iter().any(|u| u.new.is_none()) && !caps.has("delete-refs") {
        missing.push("delete-refs");
    }
    if !deletes_only && !caps.has("ofs-delta") {
        missing.push("ofs-delta");
    }
    if !missing.is_empty() {
        return Err(SmartError::Rejected(format!(
            "it does not support {} pushes",
            missing.join(", ")
        )));
    }
    let sideband = caps.has("side-band-64k");
    let mut body = commands(updates, &caps);
    if !deletes_only {
        let tips: Vec<Oid> = updates.iter().filter_map(|u| u.new).collect();
        let objects = pack::new_objects(repo, &tips, known)?;
        tracing::debug!(objects = objects.len(), "push pack");
        body.extend_from_slice(&pack::build(repo, &objects)?);
    }
    let mut report = Report::new(sideband);
    let head = session.client.exchange(
        remote,
        Request {
            method: "POST",
            url: format!("{}/git-receive-pack", session.base),
            content_type: Some("application/x-git-receive-pack-request"),
            accept: "application/x-git-receive-pack-result",
            body,
            auth: &remote.auth,
        },
        &mut |chunk| report.feed(chunk),
    )?;
    if head.content_type != "application/x-git-receive-pack-result" {
        return Err(SmartError::Protocol(format!(
            "unexpected content type {:?} for git-receive-pack",
            head.content_type
        )));
    }
    report.verdict(updates)
}

/// Command lines `<old> <new> <ref>`, capabilities after a NUL on the first, then a flush.
fn commands(updates: &[RefUpdate], caps: &Caps) -> Vec<u8> {
    let zero = Oid::ZERO_SHA1;
    let mut requested = vec!["report-status"];
    for c in ["atomic", "side-band-64k", "quiet"] {
        if caps.has(c) {
            requested.push(c);
        }
    }
    let agent = format!("agent=porch-rs/{}", env!("CARGO_PKG_VERSION"));
    requested.push(&agent);
    let mut body = Vec::new();
    for (i, u) in updates.iter().enumerate() {
        let mut line = format!(
            "{} {} {}",
            u.expected.unwrap_or(zero),
            u.new.unwrap_or(zero),
            u.remote_ref
        );
        if i == 0 {
            line.push('\0');
            line.push_str(&requested.join(" "));
        }
        line.push('\n');
        pktline::write(&mut body, line.as_bytes());
    }
    pktline::flush(&mut body);
    body
}

/// receive-pack's answer: the report-status lines, inside side band 1 when multiplexed,
/// with server messages on band 2 and a fatal error on band 3.
struct Report {
    outer: pktline::Reader,
    inner: pktline::Reader,
    sideband: bool,
    lines: Vec<String>,
    messages: Vec<String>,
    done: bool,
}

impl Report {
    fn new(sideband: bool) -> Self {
        Report {
            outer: pktline::Reader::default(),
            inner: pktline::Reader::default(),
            sideband,
            lines: Vec::new(),
            messages: Vec::new(),
            done: false,
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), SmartError> {
        if !self.sideband {
            self.inner.feed(chunk);
            return self.drain_inner();
        }
        self.outer.feed(chunk);
        while let Some(p) = self.outer.next_packet().map_err(SmartError::Protocol)? {
            let Packet::Data(d) = p else { continue };
            match d.first() {
                Some(1) => {
                    self.inner.feed(&d[1..]);
                    self.drain_inner()?;
                }
                Some(2) => self.messages.push(pktline::text(&d[1..])),
                Some(3) => {
                    return Err(SmartError::Rejected(format!(
                        "the remote failed: {}",
                        pktline::text(&d[1..])
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

    fn drain_inner(&mut self) -> Result<(), SmartError> {
        while let Some(p) = self.inner.next_packet().map_err(SmartError::Protocol)? {
            match p {
                Packet::Flush => self.done = true,
                Packet::Data(d) => self.lines.push(pktline::text(&d)),
            }
        }
        Ok(())
    }

    /// Ok when every ref was updated; a Conflict when a ref was not at its expected value.
    fn verdict(&self, updates: &[RefUpdate]) -> Result<(), SmartError> {
        let messages = self.messages.join("; ");
        if !self.done {
            return Err(SmartError::Protocol(format!(
                "the push report ended early (truncated answer?){}",
                if messages.is_empty() {
                    String::new()
                } else {
                    format!("; remote: {messages}")
                }
            )));
        }
        let unpack = self
            .lines
            .first()
            .and_then(|l| l.strip_prefix("unpack "))
            .ok_or_else(|| SmartError::Protocol("the push report has no unpack status".into()))?;
        if unpack != "ok" {
            return Err(SmartError::Rejected(format!(
                "the pushed objects could not be stored: {unpack}{}",
                with_messages(&messages)
            )));
        }
        let mut rejected = Vec::new();
        for u in updates {
            let ok = format!("ok {}", u.remote_ref);
            let ng = format!("ng {} ", u.remote_ref);
            if self.lines.contains(&ok) {
                continue;
            }
            match self.lines.iter().find_map(|l| l.strip_prefix(&ng)) {
                Some(reason) => rejected.push(format!("{}: {reason}", u.remote_ref)),
                None => {
                    return Err(SmartError::Protocol(format!(
                        "the push report says nothing about {}",
                        u.remote_ref
                    )));
                }
            }
        }
        if rejected.is_empty() {
            return Ok(());
        }
        let text = format!("{}{}", rejected.join("; "), with_messages(&messages));
        let lost_race = CONFLICT_MARKERS
            .iter()
            .chain(MORE_CONFLICT_MARKERS.iter())
            .any(|m| text.contains(m));
        let refs: Vec<&str> = updates.iter().map(|u| u.remote_ref.as_str()).collect();
        if lost_race {
            Err(SmartError::Conflict(format!(
                "push of {} was rejected because the remote changed: {text}",
                refs.join(", ")
            )))
        } else {
            Err(SmartError::Rejected(text))
        }
    }
}

fn with_messages(messages: &str) -> String {
    if messages.is_empty() {
        String::new()
    } else {
        format!(" (remote: {messages})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(r: &str, new: Option<char>, expected: Option<char>) -> RefUpdate {
        let oid = |c: char| Oid::from_str(&c.to_string().repeat(40)).expect("valid oid");
        RefUpdate {
            remote_ref: r.into(),
            new: new.map(oid),
            expected: expected.map(oid),
        }
    }

    fn report(lines: &[&str], sideband: bool, messages: &[&str]) -> Report {
        let mut inner = Vec::new();
        for l in lines {
            pktline::write(&mut inner, format!("{l}\n").as_bytes());
        }
        pktline::flush(&mut inner);
        let mut r = Report::new(sideband);
        if sideband {
            let mut outer = Vec::new();
            for m in messages {
                pktline::write(&mut outer, format!("\x02{m}\n").as_bytes());
            }
            for part in inner.chunks(7) {
                let mut d = vec![1u8];
                d.extend_from_slice(part);
                pktline::write(&mut outer, &d);
            }
            pktline::flush(&mut outer);
            for chunk in outer.chunks(3) {
                r.feed(chunk).expect("valid stream");
            }
        } else {
            r.feed(&inner).expect("valid stream");
        }
        r
    }

    #[test]
    fn commands_carry_expected_values_and_capabilities() {
        let mut caps_body = Vec::new();
        let l = format!(
            "{} capabilities^{{}}\0report-status atomic delete-refs\n",
            "0".repeat(40)
        );
        pktline::write(&mut caps_body, l.as_bytes());
        pktline::flush(&mut caps_body);
        let caps = advert::parse(&caps_body, "git-receive-pack")
            .expect("valid")
            .caps;
        let body = commands(
            &[
                update("refs/heads/main", Some('b'), Some('a')),
                update("refs/tags/p/v1", Some('b'), None),
                update("refs/heads/drafts/p/ws", None, Some('c')),
            ],
            &caps,
        );
        let text = String::from_utf8(body).expect("ascii");
        let (a, b, c, z) = (
            "a".repeat(40),
            "b".repeat(40),
            "c".repeat(40),
            "0".repeat(40),
        );
        assert!(text.contains(&format!(
            "{a} {b} refs/heads/main\0report-status atomic agent="
        )));
        assert!(text.contains(&format!("{z} {b} refs/tags/p/v1\n")));
        assert!(text.contains(&format!("{c} {z} refs/heads/drafts/p/ws\n")));
        assert!(text.ends_with("\n0000"));
    }

    #[test]
    fn all_ok_is_success() {
        let ups = [update("refs/heads/main", Some('b'), Some('a'))];
        for sideband in [false, true] {
            report(&["unpack ok", "ok refs/heads/main"], sideband, &[])
                .verdict(&ups)
                .expect("pushed");
        }
    }

    #[test]
    fn a_failed_lease_is_a_conflict() {
        let ups = [
            update("refs/heads/main", Some('b'), Some('a')),
            update("refs/tags/p/v1", Some('b'), None),
        ];
        let r = report(
            &[
                "unpack ok",
                "ng refs/heads/main atomic transaction failed",
                "ng refs/tags/p/v1 atomic transaction failed",
            ],
            true,
            &["error: cannot lock ref 'refs/heads/main': is at 1 but expected 2"],
        );
        let e = r.verdict(&ups).expect_err("lost race");
        assert!(matches!(e, SmartError::Conflict(_)), "{e}");
        assert!(e.to_string().contains("cannot lock ref"), "{e}");
    }

    #[test]
    fn a_hook_decline_is_a_rejection_with_the_reason() {
        let ups = [update("refs/heads/main", Some('b'), Some('a'))];
        let r = report(
            &["unpack ok", "ng refs/heads/main pre-receive hook declined"],
            true,
            &["protected branch"],
        );
        let e = r.verdict(&ups).expect_err("declined");
        assert!(matches!(e, SmartError::Rejected(_)), "{e}");
        assert!(e.to_string().contains("pre-receive hook declined"), "{e}");
        assert!(e.to_string().contains("protected branch"), "{e}");
    }

    #[test]
    fn incomplete_reports_are_protocol_errors() {
        let ups = [
            update("refs/heads/main", Some('b'), Some('a')),
            update("refs/tags/p/v1", Some('b'), None),
        ];
        let e = report(&["unpack ok", "ok refs/heads/main"], false, &[])
            .verdict(&ups)
            .expect_err("one ref missing");
        assert!(e.to_string().contains("refs/tags/p/v1"), "{e}");
        let mut r = Report::new(false);
        r.feed(b"000eunpack ok\n").expect("valid so far");
        let e = r.verdict(&ups).expect_err("no flush");
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = report(&["unpack index-pack abnormal exit"], false, &[])
            .verdict(&ups)
            .expect_err("unpack failed");
        assert!(matches!(e, SmartError::Rejected(_)), "{e}");
    }
}
