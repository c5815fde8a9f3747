//! The v0 ref advertisement of `GET info/refs?service=…`: refs and capabilities.

use std::collections::{HashMap, HashSet};

use git2::Oid;

use super::http::Request;
use super::pktline::{self, Packet};
use super::{Session, SmartError};
use crate::cli::Remote;

/// Redirects followed on the first request, as git's `http.followRedirects=initial`.
const MAX_REDIRECTS: usize = 5;

/// Capabilities a server advertised (`name` or `name=value`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Caps(HashSet<String>);

impl Caps {
    /// Does the server offer `name`?
    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

/// A parsed advertisement: branches and tags (peeled `^{}` lines dropped) and capabilities.
#[derive(Debug, Default)]
pub(crate) struct Advert {
    pub refs: HashMap<String, Oid>,
    pub caps: Caps,
}

/// Fetches and parses the advertisement of `service`, following redirects of the base URL.
pub(crate) fn get(
    session: &mut Session,
    remote: &Remote,
    service: &str,
) -> Result<Advert, SmartError> {
    for _ in 0..=MAX_REDIRECTS {
        let url = format!("{}/info/refs?service={service}", session.base);
        let mut body = Vec::new();
        let head = session.client.exchange(
            remote,
            Request {
                method: "GET",
                url: url.clone(),
                content_type: None,
                accept: "*/*",
                body: Vec::new(),
                auth: &remote.auth,
            },
            &mut |chunk| {
                body.extend_from_slice(chunk);
                Ok(())
            },
        )?;
        if (300..400).contains(&head.status) {
            session.base = redirected_base(&url, head.location.as_deref(), service)?;
            tracing::debug!(base = %session.base, "following redirect");
            continue;
        }
        if head.content_type != format!("application/x-{service}-advertisement") {
            return Err(SmartError::NotSmart);
        }
        return parse(&body, service);
    }
    Err(SmartError::Unavailable(format!(
        "more than {MAX_REDIRECTS} redirects"
    )))
}

/// The new base URL from a redirect of `<base>/info/refs?service=<service>`.
fn redirected_base(
    from: &str,
    location: Option<&str>,
    service: &str,
) -> Result<String, SmartError> {
    let location =
        location.ok_or_else(|| SmartError::Protocol("redirect without a Location".into()))?;
    let absolute = if location.contains("://") {
        location.to_owned()
    } else if location.starts_with('/') {
        let scheme_end = from.find("://").map(|i| i + 3).unwrap_or(0);
        let host_end = from[scheme_end..]
            .find('/')
            .map(|i| scheme_end + i)
            .unwrap_or(from.len());
        format!("{}{location}", &from[..host_end])
    } else {
        return Err(SmartError::Protocol(format!(
            "unsupported redirect to {location:?}"
        )));
    };
    absolute
        .strip_suffix(&format!("/info/refs?service={service}"))
        .map(str::to_owned)
        .ok_or_else(|| {
            SmartError::Protocol(format!(
                "redirect to {absolute:?} does not name the same service"
            ))
        })
}

/// Parses an advertisement body.
pub(crate) fn parse(body: &[u8], service: &str) -> Result<Advert, SmartError> {
    let mut reader = pktline::Reader::default();
    reader.feed(body);
    let mut next = || -> Result<Option<Packet>, SmartError> {
        reader.next_packet().map_err(SmartError::Protocol)
    };
    let mut advert = Advert::default();
    let mut first = true;
    let mut packet = next()?;
    // `# service=<name>` and a flush come first (servers may omit them).
    if let Some(Packet::Data(d)) = &packet
        && d.starts_with(b"# service=")
    {
        if pktline::text(d) != format!("# service={service}") {
            return Err(SmartError::Protocol(format!(
                "advertisement is for {:?}, expected {service}",
                pktline::text(d)
            )));
        }
        if next()? != Some(Packet::Flush) {
            return Err(SmartError::Protocol(
                "no flush after the service line".into(),
            ));
        }
        packet = next()?;
    }
    loop {
        match packet {
            Some(Packet::Flush) => return Ok(advert),
            None => {
                return Err(SmartError::Protocol(
                    "ref advertisement ended without a flush (truncated answer?)".into(),
                ));
            }
            Some(Packet::Data(d)) => {
                if d.starts_with(b"ERR ") {
                    return Err(SmartError::Unavailable(format!(
                        "the server said: {}",
                        pktline::text(&d[4..])
                    )));
                }
                let line = if first {
                    first = false;
                    let (line, caps) = match d.iter().position(|b| *b == 0) {
                        Some(nul) => (&d[..nul], &d[nul + 1..]),
                        None => (&d[..], &b""[..]),
                    };
                    advert.caps = Caps(
                        pktline::text(caps)
                            .split(' ')
                            .filter(|c| !c.is_empty())
                            .map(|c| c.split('=').next().unwrap_or(c).to_owned())
                            .collect(),
                    );
                    line
                } else {
                    &d[..]
                };
                let text = pktline::text(line);
                let (oid, name) = text
                    .split_once(' ')
                    .ok_or_else(|| SmartError::Protocol(format!("malformed ref line {text:?}")))?;
                let oid = Oid::from_str(oid)
                    .ok()
                    .filter(|_| oid.len() == 40)
                    .ok_or_else(|| SmartError::Protocol(format!("malformed ref line {text:?}")))?;
                if (name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
                    && !name.ends_with("^{}")
                {
                    advert.refs.insert(name.to_owned(), oid);
                }
            }
        }
        packet = next()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(lines: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        pktline::write(&mut out, b"# service=git-upload-pack\n");
        pktline::flush(&mut out);
        for l in lines {
            pktline::write(&mut out, l);
        }
        pktline::flush(&mut out);
        out
    }

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    #[test]
    fn parses_refs_and_capabilities() {
        let first = format!("{A} HEAD\0multi_ack side-band-64k agent=git/2.47\n");
        let main = format!("{A} refs/heads/main\n");
        let tag = format!("{B} refs/tags/pkg/v1\n");
        let peeled = format!("{A} refs/tags/pkg/v1^{{}}\n");
        let pull = format!("{B} refs/pull/1/head\n");
        let a = parse(
            &body(&[
                first.as_bytes(),
                main.as_bytes(),
                tag.as_bytes(),
                peeled.as_bytes(),
                pull.as_bytes(),
            ]),
            "git-upload-pack",
        )
        .expect("valid advertisement");
        assert_eq!(a.refs.len(), 2);
        assert_eq!(a.refs["refs/tags/pkg/v1"].to_string(), B);
        assert!(a.caps.has("side-band-64k") && a.caps.has("agent"));
        assert!(!a.caps.has("atomic"));
    }

    #[test]
    fn parses_an_empty_repository() {
        let line = format!(
            "{} capabilities^{{}}\0report-status atomic\n",
            "0".repeat(40)
        );
        let a = parse(&body(&[line.as_bytes()]), "git-upload-pack").expect("valid advertisement");
        assert!(a.refs.is_empty());
        assert!(a.caps.has("atomic"));
    }

    #[test]
    fn rejects_truncated_and_garbled_bodies() {
        let main = format!("{A} refs/heads/main\n");
        let full = body(&[main.as_bytes()]);
        let truncated = &full[..full.len() - 4];
        let e = parse(truncated, "git-upload-pack").expect_err("truncated");
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = parse(b"<html>hello</html>", "git-upload-pack").expect_err("html");
        assert!(e.to_string().contains("pkt-line"), "{e}");
        let bad = body(&[b"not-an-oid refs/heads/x\n"]);
        assert!(parse(&bad, "git-upload-pack").is_err());
        let e = parse(&body(&[main.as_bytes()]), "git-receive-pack").expect_err("svc");
        assert!(e.to_string().contains("expected git-receive-pack"), "{e}");
    }

    #[test]
    fn follows_redirects_of_the_base() {
        let svc = "git-upload-pack";
        let from = "http://h:1/old.git/info/refs?service=git-upload-pack";
        assert_eq!(
            redirected_base(
                from,
                Some("/new.git/info/refs?service=git-upload-pack"),
                svc
            )
            .expect("valid"),
            "http://h:1/new.git"
        );
        assert_eq!(
            redirected_base(
                from,
                Some("https://other/x.git/info/refs?service=git-upload-pack"),
                svc
            )
            .expect("valid"),
            "https://other/x.git"
        );
        assert!(redirected_base(from, Some("https://other/login"), svc).is_err());
        assert!(redirected_base(from, None, svc).is_err());
    }
}
