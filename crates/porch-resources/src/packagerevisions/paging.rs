//! `limit`/`continue` over the engine's ordered list of package revisions (kubectl's
//! `--chunk-size`, default 500).
//!
//! The engine's order (repository, package, revision, lifecycle, workspace) is kept, so a paged
//! list shows what an unpaged one does. A continue token names the last object of the previous
//! page and its position: the next page starts after that object, or at its old position when it
//! was deleted in between (the object that moved into it is served, not skipped). The resourceVersion of every page is the first page's, as
//! kube-apiserver reports it.

use base64::Engine as _;
use porch_apiserver::ApiError;
use serde_json::{Value, json};

/// Where a page stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// resourceVersion of the first page.
    pub rv: u64,
    /// Namespace and name of the last object served.
    pub namespace: String,
    pub name: String,
    /// Its position in the list.
    pub position: usize,
}

impl Token {
    pub fn encode(&self) -> String {
        let raw = json!({"v": "meta.k8s.io/v1", "rv": self.rv, "ns": self.namespace,
                         "name": self.name, "pos": self.position});
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw.to_string())
    }

    pub fn decode(token: &str) -> Result<Token, ApiError> {
        let bad = || ApiError::bad_request("continue key is not valid: re-run the list without it");
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .map_err(|_| bad())?;
        let v: Value = serde_json::from_slice(&raw).map_err(|_| bad())?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Ok(Token {
            rv: v.get("rv").and_then(Value::as_u64).ok_or_else(bad)?,
            namespace: text("ns").ok_or_else(bad)?,
            name: text("name").ok_or_else(bad)?,
            position: v
                .get("pos")
                .and_then(Value::as_u64)
                .and_then(|p| usize::try_from(p).ok())
                .ok_or_else(bad)?,
        })
    }
}

/// The page of `items` (each with its namespace and name) after `after`, at most `limit` long;
/// the token of the next page when more remain.
pub fn page<T>(
    items: Vec<(String, String, T)>,
    after: Option<&Token>,
    limit: Option<usize>,
    rv: u64,
) -> (Vec<T>, Option<Token>) {
    let start = match after {
        None => 0,
        Some(t) => items
            .iter()
            .position(|(ns, name, _)| *ns == t.namespace && *name == t.name)
            .map_or(t.position, |i| i + 1),
    };
    let total = items.len();
    let end = limit
        .filter(|l| *l > 0)
        .map_or(total, |l| start.saturating_add(l).min(total));
    let mut next = None;
    let mut out = Vec::with_capacity(end.saturating_sub(start));
    for (i, (ns, name, item)) in items.into_iter().enumerate() {
        if i < start || i >= end {
            continue;
        }
        if i + 1 == end && end < total {
            next = Some(Token {
                rv,
                namespace: ns,
                name,
                position: i,
            });
        }
        out.push(item);
    }
    (out, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(names: &[&str]) -> Vec<(String, String, String)> {
        names
            .iter()
            .map(|n| ("ns".to_owned(), (*n).to_owned(), (*n).to_owned()))
            .collect()
    }

    #[test]
    fn pages_cover_the_list_once_in_order() {
        let all = ["a", "b", "c", "d", "e"];
        let mut seen = Vec::new();
        let mut token: Option<Token> = None;
        loop {
            let (page, next) = page(items(&all), token.as_ref(), Some(2), 7);
            seen.extend(page);
            match next {
                Some(t) => {
                    assert_eq!(t.rv, 7);
                    token = Some(Token::decode(&t.encode()).expect("round trip"));
                }
                None => break,
            }
        }
        assert_eq!(seen, all);
    }

    #[test]
    fn a_deleted_last_object_resumes_at_its_position() {
        let (first, next) = page(items(&["a", "b", "c", "d"]), None, Some(2), 1);
        assert_eq!(first, ["a", "b"]);
        let (rest, more) = page(items(&["a", "c", "d"]), next.as_ref(), Some(2), 1);
        assert_eq!(rest, ["c", "d"], "from its position in the new list");
        assert!(more.is_none());
        let (all, none) = page(items(&["a", "b"]), None, None, 1);
        assert_eq!(all, ["a", "b"]);
        assert!(none.is_none());
    }

    #[test]
    fn garbage_tokens_are_400() {
        assert!(Token::decode("not base64!").is_err());
        assert!(Token::decode("e30").is_err());
    }
}
