//! Raw JSON requests for one resource type, with upstream's wire shapes (Go clients send
//! plain JSON bodies; `Table` is asked for with kubectl's Accept header).

use http::{Method, Request};
use serde_json::Value;

use super::error::RemoteError;

/// The Accept header kubectl sends when it wants a server-side Table.
pub const TABLE_ACCEPT: &str = "application/json;as=Table;g=meta.k8s.io;v=v1,application/json";

/// A namespaced resource type (`/api/v1` or `/apis/<group>/<version>`).
#[derive(Debug, Clone, Copy)]
pub struct ResourceApi {
    /// `""` for the core group.
    pub group: &'static str,
    pub version: &'static str,
    /// Plural, e.g. `repositories`.
    pub plural: &'static str,
}

/// `config.porch.kpt.dev/v1alpha1` repositories.
pub const REPOSITORIES: ResourceApi = ResourceApi {
    group: "config.porch.kpt.dev",
    version: "v1alpha1",
    plural: "repositories",
};

/// Core `v1` secrets.
pub const SECRETS: ResourceApi = ResourceApi {
    group: "",
    version: "v1",
    plural: "secrets",
};

/// `porch.kpt.dev/v1alpha1` package revisions.
pub const PACKAGE_REVISIONS: ResourceApi = ResourceApi {
    group: "porch.kpt.dev",
    version: "v1alpha1",
    plural: "packagerevisions",
};

/// `porch.kpt.dev/v1alpha1` package revision contents.
pub const PACKAGE_REVISION_RESOURCES: ResourceApi = ResourceApi {
    group: "porch.kpt.dev",
    version: "v1alpha1",
    plural: "packagerevisionresources",
};

impl ResourceApi {
    /// The collection path in `namespace`, or across all namespaces for `None`.
    pub fn collection(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) => format!("{base}/namespaces/{ns}/{}", self.plural),
            None => format!("{base}/{}", self.plural),
        }
    }

    pub fn item(&self, namespace: &str, name: &str) -> String {
        format!("{}/{name}", self.collection(Some(namespace)))
    }

    pub async fn get(
        &self,
        client: &kube::Client,
        namespace: &str,
        name: &str,
    ) -> Result<Value, RemoteError> {
        send(client, Method::GET, &self.item(namespace, name), None, None).await
    }

    /// Lists (as a Table when `accept` says so).
    pub async fn list(
        &self,
        client: &kube::Client,
        namespace: Option<&str>,
        accept: Option<&str>,
    ) -> Result<Value, RemoteError> {
        send(
            client,
            Method::GET,
            &self.collection(namespace),
            None,
            accept,
        )
        .await
    }

    /// Lists with a `fieldSelector` (as a Table when `accept` says so).
    pub async fn list_selected(
        &self,
        client: &kube::Client,
        namespace: Option<&str>,
        field_selector: Option<&str>,
        accept: Option<&str>,
    ) -> Result<Value, RemoteError> {
        let mut path = self.collection(namespace);
        if let Some(sel) = field_selector.filter(|s| !s.is_empty()) {
            path.push_str("?fieldSelector=");
            path.push_str(&query_escape(sel));
        }
        send(client, Method::GET, &path, None, accept).await
    }

    /// Gets one object (`name`) or lists (`None`) as a server-side Table, with a
    /// `fieldSelector` and `includeObject` (`None`, `Metadata` or `Object`) when given.
    pub async fn table(
        &self,
        client: &kube::Client,
        namespace: Option<&str>,
        name: Option<&str>,
        field_selector: Option<&str>,
        include_object: Option<&str>,
    ) -> Result<Value, RemoteError> {
        let mut path = match (name, namespace) {
            (Some(name), Some(ns)) => self.item(ns, name),
            _ => self.collection(namespace),
        };
        let mut query = Vec::new();
        if let Some(sel) = field_selector.filter(|s| !s.is_empty()) {
            query.push(format!("fieldSelector={}", query_escape(sel)));
        }
        if let Some(include) = include_object {
            query.push(format!("includeObject={}", query_escape(include)));
        }
        if !query.is_empty() {
            path.push('?');
            path.push_str(&query.join("&"));
        }
        send(client, Method::GET, &path, None, Some(TABLE_ACCEPT)).await
    }

    /// PUT on a subresource (e.g. `approval`).
    pub async fn replace_subresource(
        &self,
        client: &kube::Client,
        namespace: &str,
        name: &str,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, RemoteError> {
        let path = format!("{}/{subresource}", self.item(namespace, name));
        send(client, Method::PUT, &path, Some(body), None).await
    }

    pub async fn create(
        &self,
        client: &kube::Client,
        namespace: &str,
        body: &Value,
    ) -> Result<Value, RemoteError> {
        let path = self.collection(Some(namespace));
        send(client, Method::POST, &path, Some(body), None).await
    }

    pub async fn replace(
        &self,
        client: &kube::Client,
        namespace: &str,
        name: &str,
        body: &Value,
    ) -> Result<Value, RemoteError> {
        send(
            client,
            Method::PUT,
            &self.item(namespace, name),
            Some(body),
            None,
        )
        .await
    }

    pub async fn delete(
        &self,
        client: &kube::Client,
        namespace: &str,
        name: &str,
    ) -> Result<Value, RemoteError> {
        send(
            client,
            Method::DELETE,
            &self.item(namespace, name),
            None,
            None,
        )
        .await
    }
}

/// Percent-encodes a query value (everything but RFC 3986 unreserved characters).
fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

async fn send(
    client: &kube::Client,
    method: Method,
    path: &str,
    body: Option<&Value>,
    accept: Option<&str>,
) -> Result<Value, RemoteError> {
    let mut builder = Request::builder().method(method.clone()).uri(path);
    if let Some(a) = accept {
        builder = builder.header(http::header::ACCEPT, a);
    } else {
        builder = builder.header(http::header::ACCEPT, "application/json");
    }
    let bytes = match body {
        Some(b) => {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
            serde_json::to_vec(b).map_err(|e| RemoteError::Decode(e.to_string()))?
        }
        None => Vec::new(),
    };
    let req = builder
        .body(bytes)
        .map_err(|e| RemoteError::Usage(format!("cannot build request: {e}")))?;
    client
        .request::<Value>(req)
        .await
        .map_err(|e| refused_in_go_words(e, &method, path))
}

/// A refused connection as client-go reports it (Go's `url.Error` around the dial error:
/// `Get "<url>": dial tcp <addr>: connect: connection refused`); other errors as they are.
fn refused_in_go_words(e: kube::Error, method: &Method, path: &str) -> RemoteError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    let mut refused = false;
    while let Some(s) = source {
        if s.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            refused = true;
        }
        source = s.source();
    }
    match super::connection::server_url().filter(|_| refused) {
        Some(base) => RemoteError::Transport(refused_text(base, method, path)),
        None => e.into(),
    }
}

fn refused_text(base: &http::Uri, method: &Method, path: &str) -> String {
    let scheme = base.scheme_str().unwrap_or("https");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or_default();
    let host = base.host().unwrap_or_default();
    let port = base
        .port_u16()
        .unwrap_or(if scheme == "http" { 80 } else { 443 });
    // Go names the address it dialled: a host name's first resolved address.
    let addr = if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        format!("{host}:{port}")
    } else {
        std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
            .ok()
            .and_then(|mut a| a.next())
            .map_or_else(|| format!("{host}:{port}"), |a| a.to_string())
    };
    let op = method.as_str();
    let op = format!("{}{}", &op[..1], op[1..].to_lowercase());
    let prefix = base.path().trim_end_matches('/');
    let url = format!("{scheme}://{authority}{prefix}{path}");
    format!("{op} {url:?}: dial tcp {addr}: connect: connection refused")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_reads_as_client_gos() {
        let base: http::Uri = "https://127.0.0.1:1".parse().expect("uri");
        assert_eq!(
            refused_text(&base, &Method::PUT, "/apis/x/v1/namespaces/ns/things/a"),
            "Put \"https://127.0.0.1:1/apis/x/v1/namespaces/ns/things/a\": dial tcp 127.0.0.1:1: connect: connection refused"
        );
        let base: http::Uri = "http://[::1]/prefix/".parse().expect("uri");
        assert_eq!(
            refused_text(&base, &Method::GET, "/api/v1/secrets"),
            "Get \"http://[::1]/prefix/api/v1/secrets\": dial tcp [::1]:80: connect: connection refused"
        );
    }

    #[test]
    fn paths() {
        assert_eq!(
            REPOSITORIES.item("ns", "r"),
            "/apis/config.porch.kpt.dev/v1alpha1/namespaces/ns/repositories/r"
        );
        assert_eq!(
            SECRETS.collection(Some("ns")),
            "/api/v1/namespaces/ns/secrets"
        );
        assert_eq!(
            REPOSITORIES.collection(None),
            "/apis/config.porch.kpt.dev/v1alpha1/repositories"
        );
        assert_eq!(
            query_escape("spec.packageName=a/b c"),
            "spec.packageName%3Da%2Fb%20c"
        );
    }
}
