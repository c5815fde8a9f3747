//! Who is asking, through the real server with kubectl 1.32 and kube-rs: token-file users,
//! client certificates from `porch-server users add`, ServiceAccount tokens from
//! `kubectl create token`, OIDC ID tokens verified against a local issuer's JWKS, anonymous
//! requests; and every kind of bad credential answered 401 and logged without the secret.
//!
//! These servers run with `--authorization-mode AlwaysAllow`: what is tested here is who a
//! request is, not what that user may do (tests/rbac.rs; `authenticated_users_get_their_roles`
//! below joins both).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use common::porch::{Env, init, name, publish, revisions};
use common::{KUBECTL, Server};
use serde_json::{Value, json};

fn kubectl_as(s: &Server, kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(KUBECTL)
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("HOME", s.home.path())
        .stdin(Stdio::null())
        .output()
        .expect("kubectl")
}

fn assert_unauthorized(s: &Server, out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    // kubectl's words for a 401: "Unauthorized" (the Status), or during discovery "the server
    // has asked for the client to provide credentials".
    let said_401 = stderr.contains("Unauthorized")
        || stderr.contains("asked for the client to provide credentials");
    assert!(
        !out.status.success() && said_401,
        "{what}: expected 401, got {:?}: {stderr}\n{}",
        out.status,
        s.log()
    );
}

/// The server logged a write by `user` (writes are logged at info with the user).
fn wait_logged_user(s: &Server, user: &str) {
    let needle = format!("user={user} ");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !s.log().contains(&needle) {
        assert!(
            Instant::now() < deadline,
            "no request by {user}: {}",
            s.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_not_logged(s: &Server, secret: &str) {
    assert!(
        !s.log().contains(secret),
        "the server log holds a credential"
    );
}

#[tokio::test]
async fn token_file_users_anonymous_and_unknown_tokens() {
    let files = tempfile::tempdir().expect("tempdir");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "alice-secret-token,alice,u1,\"porch-authors,porch-approvers\"\n",
    )
    .expect("write tokens");
    let s = Server::start_with(&[
        "--authorization-mode",
        "AlwaysAllow",
        "--token-auth-file",
        tokens.to_str().expect("utf-8"),
    ]);
    s.kubectl_ok(&[
        "create",
        "namespace",
        "from-alice",
        "--token=alice-secret-token",
    ]);
    wait_logged_user(&s, "alice");

    let out = s.kubectl(&["get", "namespaces", "--token=unknown-secret-token"]);
    assert_unauthorized(&s, &out, "unknown token");
    assert!(s.log().contains("unauthenticated request rejected"));
    assert_not_logged(&s, "unknown-secret-token");
    assert_not_logged(&s, "alice-secret-token");

    // The file is re-read when it changes: bob appears, alice goes.
    std::fs::write(&tokens, "bob-secret-token,bob,u2,dev\n").expect("rewrite tokens");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = s.kubectl(&[
            "create",
            "namespace",
            "from-bob",
            "--token=bob-secret-token",
        ]);
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "bob never authenticated: {}",
            s.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    wait_logged_user(&s, "bob");
    // Each replica of a replica set (PORCH_TEST_STORE=postgres-3) re-reads the file on its
    // own: the removed token is refused everywhere within the reload interval.
    let deadline = Instant::now() + Duration::from_secs(10);
    let out = loop {
        let out = s.kubectl(&["get", "namespaces", "--token=alice-secret-token"]);
        if !out.status.success() || Instant::now() > deadline {
            break out;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_unauthorized(&s, &out, "removed token");

    // No credentials: 401 without --anonymous-auth (kube-rs without the kubeconfig's token).
    let kc = kube::config::Kubeconfig::read_from(s.kubeconfig()).expect("kubeconfig");
    let mut cfg =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    cfg.auth_info = kube::config::AuthInfo::default();
    let anonymous = kube::Client::try_from(cfg).expect("client");
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(anonymous);
    match ns.list(&Default::default()).await {
        Err(kube::Error::Api(e)) => {
            assert_eq!(e.code, 401);
            assert_eq!(e.reason, "Unauthorized");
        }
        other => panic!("anonymous list: {other:?}"),
    }
}

#[tokio::test]
async fn anonymous_auth_names_requests_without_credentials() {
    let s = Server::start_with(&["--authorization-mode", "AlwaysAllow", "--anonymous-auth"]);
    let kc = kube::config::Kubeconfig::read_from(s.kubeconfig()).expect("kubeconfig");
    let mut cfg =
        kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
            .await
            .expect("config");
    cfg.auth_info = kube::config::AuthInfo::default();
    let client = kube::Client::try_from(cfg).expect("client");
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let obj: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": "by-nobody"}})).expect("namespace");
    ns.create(&Default::default(), &obj)
        .await
        .expect("anonymous create");
    wait_logged_user(&s, "system:anonymous");
    // A bad token is still a 401, not anonymous.
    let out = s.kubectl(&["get", "namespaces", "--token=wrong-secret-token"]);
    assert_unauthorized(&s, &out, "wrong token with anonymous allowed");
}

fn users_add(s: &Server, name: &str, groups: &[&str]) -> PathBuf {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_porch-server"));
    cmd.arg("--data-dir")
        .arg(s.data_dir())
        .args(["users", "add", name]);
    for g in groups {
        cmd.args(["--group", g]);
    }
    let out = cmd.output().expect("users add");
    assert!(
        out.status.success(),
        "users add: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A copy of `kubeconfig` authenticating with another certificate and key.
fn with_certificate(s: &Server, kubeconfig: &Path, cert: &str, key: &str, name: &str) -> PathBuf {
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let mut v: Value =
        serde_yaml::from_str(&std::fs::read_to_string(kubeconfig).expect("read")).expect("yaml");
    v["users"][0]["user"] =
        json!({"client-certificate-data": b64(cert), "client-key-data": b64(key)});
    s.write_file(name, &serde_yaml::to_string(&v).expect("yaml"))
}

fn ca_params() -> rcgen::CertificateParams {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "porch-server local CA");
    params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    params
}

fn client_cert(
    issuer: &rcgen::Issuer<'_, rcgen::KeyPair>,
    user: &str,
    not_after: time::OffsetDateTime,
) -> (String, String) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, user);
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    params.not_before = time::OffsetDateTime::now_utc() - time::Duration::days(30);
    params.not_after = not_after;
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, issuer).expect("sign");
    (cert.pem(), key.serialize_pem())
}

#[tokio::test]
async fn client_certificates_from_users_add() {
    let s = Server::start_with(&["--authorization-mode", "AlwaysAllow"]);
    let alice = users_add(&s, "alice", &["porch-approvers"]);
    let text = std::fs::read_to_string(&alice).expect("alice kubeconfig");
    assert!(text.contains("client-certificate-data") && !text.contains("token"));
    let out = kubectl_as(&s, &alice, &["create", "namespace", "from-alice"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_logged_user(&s, "alice");

    // kube-rs with the same kubeconfig.
    let client = common::client_from(&alice).await;
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let got = ns.get("from-alice").await.expect("get as alice");
    assert_eq!(got.metadata.name.as_deref(), Some("from-alice"));

    // kubectl's --client-certificate/--client-key flags, with a kubeconfig that has no user.
    let carol = users_add(&s, "carol", &["porch-authors"]);
    let mut kc: Value =
        serde_yaml::from_str(&std::fs::read_to_string(&carol).expect("read")).expect("yaml");
    let decode = |field: &str| {
        let data = kc["users"][0]["user"][field].as_str().expect("data");
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .expect("base64")
    };
    let cert_file = s.write_file(
        "carol.crt",
        &String::from_utf8(decode("client-certificate-data")).expect("pem"),
    );
    let key_file = s.write_file(
        "carol.key",
        &String::from_utf8(decode("client-key-data")).expect("pem"),
    );
    kc["users"][0]["user"] = json!({});
    let bare = s.write_file(
        "nobody.kubeconfig",
        &serde_yaml::to_string(&kc).expect("yaml"),
    );
    let out = kubectl_as(
        &s,
        &bare,
        &[
            "create",
            "namespace",
            "from-carol",
            &format!("--client-certificate={}", cert_file.display()),
            &format!("--client-key={}", key_file.display()),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_logged_user(&s, "carol");

    // Expired, though signed by the server's CA.
    let ca_key = std::fs::read_to_string(s.data_dir().join("pki/ca.key")).expect("ca key");
    let issuer = rcgen::Issuer::new(ca_params(), rcgen::KeyPair::from_pem(&ca_key).expect("key"));
    let (cert, key) = client_cert(
        &issuer,
        "mallory",
        time::OffsetDateTime::now_utc() - time::Duration::days(1),
    );
    let expired = with_certificate(&s, &alice, &cert, &key, "expired.kubeconfig");
    let out = kubectl_as(&s, &expired, &["get", "namespaces"]);
    assert_unauthorized(&s, &out, "expired certificate");

    // Valid dates, but from another CA with the same name.
    let other = rcgen::Issuer::new(ca_params(), rcgen::KeyPair::generate().expect("key"));
    let (cert, key) = client_cert(
        &other,
        "mallory",
        time::OffsetDateTime::now_utc() + time::Duration::days(1),
    );
    let foreign = with_certificate(&s, &alice, &cert, &key, "foreign.kubeconfig");
    let out = kubectl_as(&s, &foreign, &["get", "namespaces"]);
    assert_unauthorized(&s, &out, "certificate of another CA");
    assert!(!s.log().contains("user=mallory"));
}

#[tokio::test]
async fn service_account_tokens_authenticate_while_the_account_exists() {
    let s = Server::start_with(&["--authorization-mode", "AlwaysAllow"]);
    s.kubectl_ok(&["create", "serviceaccount", "ci-bot"]);
    let token = s.kubectl_ok(&["create", "token", "ci-bot", "--duration=20m"]);
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let flag = format!("--token={token}");
    s.kubectl_ok(&["create", "namespace", "from-ci", &flag]);
    wait_logged_user(&s, "system:serviceaccount:default:ci-bot");

    // Tampered: one character of the payload changed.
    let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
    let mut payload: Vec<u8> = parts[1].clone().into_bytes();
    let i = payload.len() / 2;
    payload[i] = if payload[i] == b'A' { b'B' } else { b'A' };
    parts[1] = String::from_utf8(payload).expect("utf-8");
    let tampered = format!("--token={}", parts.join("."));
    let out = s.kubectl(&["get", "namespaces", &tampered]);
    assert_unauthorized(&s, &out, "tampered service account token");

    s.kubectl_ok(&["delete", "serviceaccount", "ci-bot"]);
    let out = s.kubectl(&["get", "namespaces", &flag]);
    assert_unauthorized(&s, &out, "token of a deleted service account");
    // Recreated under the same name: the old token stays refused.
    s.kubectl_ok(&["create", "serviceaccount", "ci-bot"]);
    let out = s.kubectl(&["get", "namespaces", &flag]);
    assert_unauthorized(&s, &out, "token of a recreated service account");
    assert_not_logged(&s, token);
}

/// A local OIDC issuer: discovery document and JWKS over plain HTTP on loopback.
struct Issuer {
    url: String,
    key: rcgen::KeyPair,
}

impl Issuer {
    fn start() -> Issuer {
        let key = rcgen::KeyPair::generate().expect("key");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!(
            "http://127.0.0.1:{}",
            listener.local_addr().expect("addr").port()
        );
        let raw = key.public_key_raw();
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "test-key", "use": "sig",
            "alg": "ES256", "x": b64(&raw[1..33]), "y": b64(&raw[33..65])}]})
        .to_string();
        let discovery = json!({"issuer": url, "jwks_uri": format!("{url}/keys")}).to_string();
        std::thread::spawn(move || {
            // Bounded: a test needs a handful of fetches.
            for stream in listener.incoming().take(50) {
                let Ok(mut stream) = stream else { continue };
                let mut line = String::new();
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                }
                let body = if line.contains("/.well-known/openid-configuration") {
                    &discovery
                } else {
                    &jwks
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Issuer { url, key }
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some("test-key".into());
        let key = jsonwebtoken::EncodingKey::from_ec_pem(self.key.serialize_pem().as_bytes())
            .expect("key");
        jsonwebtoken::encode(&header, claims, &key).expect("sign")
    }
}

fn now() -> i64 {
    time::OffsetDateTime::now_utc().unix_timestamp()
}

#[tokio::test]
async fn oidc_id_tokens_verified_against_the_issuer_keys() {
    let idp = Issuer::start();
    let s = Server::start_with(&[
        "--authorization-mode",
        "AlwaysAllow",
        "--oidc-issuer-url",
        &idp.url,
        "--oidc-client-id",
        "porch",
        "--oidc-username-claim",
        "email",
        "--oidc-groups-claim",
        "groups",
        "--oidc-groups-prefix",
        "oidc:",
    ]);
    let claims = |aud: &str, exp: i64| {
        json!({"iss": idp.url, "aud": aud, "sub": "1234", "email": "alice@example.com",
               "email_verified": true, "groups": ["porch-approvers"], "iat": now(), "exp": exp})
    };
    let good = idp.sign(&claims("porch", now() + 600));
    s.kubectl_ok(&[
        "create",
        "namespace",
        "from-oidc",
        &format!("--token={good}"),
    ]);
    wait_logged_user(&s, "alice@example.com");

    let wrong_audience = idp.sign(&claims("another-app", now() + 600));
    let out = s.kubectl(&["get", "namespaces", &format!("--token={wrong_audience}")]);
    assert_unauthorized(&s, &out, "wrong audience");

    let expired = idp.sign(&claims("porch", now() - 600));
    let out = s.kubectl(&["get", "namespaces", &format!("--token={expired}")]);
    assert_unauthorized(&s, &out, "expired ID token");

    // Claims rewritten after signing.
    let mut parts: Vec<&str> = good.split('.').collect();
    let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
        json!({"iss": idp.url, "aud": "porch", "sub": "1", "email": "root@example.com",
               "exp": now() + 600})
        .to_string(),
    );
    parts[1] = &forged;
    let tampered = parts.join(".");
    let out = s.kubectl(&["get", "namespaces", &format!("--token={tampered}")]);
    assert_unauthorized(&s, &out, "tampered ID token");
    assert!(!s.log().contains("root@example.com"));
    for t in [&good, &wrong_audience, &expired, &tampered] {
        assert_not_logged(&s, t);
    }
}

#[tokio::test]
async fn revisions_and_events_name_the_authenticated_user() {
    let files = tempfile::tempdir().expect("tempdir");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-secret-token,alice,u1,porch-authors\n").expect("tokens");
    let env = Env::start_with(&[
        "--authorization-mode",
        "AlwaysAllow",
        "--token-auth-file",
        tokens.to_str().expect("utf-8"),
    ])
    .await;
    let url = env.empty_repo("authors");
    env.register("default", "authors", &url, json!({})).await;

    // alice's kube-rs client: the admin kubeconfig with her token.
    let mut kc: Value = serde_yaml::from_str(
        &std::fs::read_to_string(env.server.kubeconfig()).expect("kubeconfig"),
    )
    .expect("yaml");
    kc["users"][0]["user"] = json!({"token": "alice-secret-token"});
    let path = env.server.write_file(
        "alice.kubeconfig",
        &serde_yaml::to_string(&kc).expect("yaml"),
    );
    let alice = common::client_from(&path).await;
    let prs = revisions(&alice, "default");
    let draft = init(&prs, "authors", "pkg", "ws1").await;
    let published = publish(&prs, &name(&draft)).await;
    assert_eq!(published.data["status"]["publishedBy"], "alice");

    // Events are written by a background task: give it a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let events = env
            .server
            .kubectl_ok(&["get", "events", "-n", "default", "-o", "json"]);
        let events: Value = serde_json::from_str(&events).expect("events json");
        let messages: Vec<String> = events["items"]
            .as_array()
            .expect("items")
            .iter()
            .filter_map(|e| e["message"].as_str().map(str::to_string))
            .collect();
        let created = messages
            .iter()
            .any(|m| m.starts_with("Created") && m.ends_with(" by alice"));
        let proposed = messages.iter().any(|m| m == "Proposed by alice");
        let approved = messages.iter().any(|m| m.starts_with("Approved by alice:"));
        if created && proposed && approved {
            break;
        }
        assert!(Instant::now() < deadline, "events: {messages:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A client whose kubeconfig is the admin's with `token` instead.
async fn client_with_token(env: &Env, file: &str, token: &str) -> kube::Client {
    let mut kc: Value = serde_yaml::from_str(
        &std::fs::read_to_string(env.server.kubeconfig()).expect("kubeconfig"),
    )
    .expect("yaml");
    kc["users"][0]["user"] = json!({ "token": token });
    let path = env
        .server
        .write_file(file, &serde_yaml::to_string(&kc).expect("yaml"));
    common::client_from(&path).await
}

/// Authentication and RBAC together (the default mode): token-file users in groups bound to
/// the shipped roles do exactly their part, and the approver is recorded as the publisher.
#[tokio::test]
async fn authenticated_users_get_their_roles() {
    use common::porch::{propose, set_approval};
    let files = tempfile::tempdir().expect("tempdir");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "alice-token,alice,u1,porch-authors\nbob-token,bob,u2,porch-approvers\ncarol-token,carol,u3\ndave-token,dave,u4\n",
    )
    .expect("tokens");
    let env = Env::start_with(&["--token-auth-file", tokens.to_str().expect("utf-8")]).await;
    let url = env.empty_repo("team");
    env.register("default", "team", &url, json!({})).await;
    for (binding, role, group) in [
        ("authors", "porch-author", "porch-authors"),
        ("approvers", "porch-approver", "porch-approvers"),
    ] {
        env.server.kubectl_ok(&[
            "create",
            "rolebinding",
            binding,
            &format!("--clusterrole={role}"),
            &format!("--group={group}"),
            "-n",
            "default",
        ]);
    }
    let alice = revisions(
        &client_with_token(&env, "alice.kubeconfig", "alice-token").await,
        "default",
    );
    let bob = revisions(
        &client_with_token(&env, "bob.kubeconfig", "bob-token").await,
        "default",
    );
    let carol = revisions(
        &client_with_token(&env, "carol.kubeconfig", "carol-token").await,
        "default",
    );

    let forbidden = |r: Result<kube::api::DynamicObject, kube::Error>, what: &str| match r {
        Err(kube::Error::Api(s)) => {
            assert_eq!(s.code, 403, "{what}: {s:?}");
            s.message
        }
        other => panic!("{what}: expected 403, got {other:?}"),
    };
    // carol has no role: not even a list.
    match carol.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 403, "{s:?}"),
        other => panic!("carol listed: {other:?}"),
    }
    // alice authors and proposes, but may not approve.
    let draft = init(&alice, "team", "pkg", "ws1").await;
    let name = name(&draft);
    propose(&alice, &name).await;
    let msg = forbidden(
        set_approval(&alice, &name, "Published").await,
        "alice approves",
    );
    assert!(
        msg.contains("User \"alice\" cannot update resource \"packagerevisions/approval\""),
        "{msg}"
    );
    // bob approves, but may not author.
    let published = set_approval(&bob, &name, "Published")
        .await
        .expect("bob approves");
    assert_eq!(published.data["spec"]["lifecycle"], "Published");
    assert_eq!(published.data["status"]["publishedBy"], "bob");
    let body: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
        "metadata": {"namespace": "default"},
        "spec": {"repository": "team", "packageName": "other", "workspaceName": "ws",
                 "tasks": [{"type": "init", "init": {}}]},
    }))
    .expect("object");
    forbidden(bob.create(&Default::default(), &body).await, "bob creates");

    // dave may create revisions but not read the upstream: his clone of it is refused (a
    // clone reads its upstream), until he may get that one revision.
    let dave = revisions(
        &client_with_token(&env, "dave.kubeconfig", "dave-token").await,
        "default",
    );
    let k = |args: &[&str]| env.server.kubectl_ok(args);
    k(&[
        "create",
        "role",
        "creator",
        "--verb=create",
        "--resource=packagerevisions.porch.kpt.dev",
        "-n",
        "default",
    ]);
    k(&[
        "create",
        "rolebinding",
        "creator",
        "--role=creator",
        "--user=dave",
        "-n",
        "default",
    ]);
    let clone: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "porch.kpt.dev/v1alpha1", "kind": "PackageRevision",
        "metadata": {"namespace": "default"},
        "spec": {"repository": "team", "packageName": "copy", "workspaceName": "ws",
                 "tasks": [{"type": "clone", "clone": {"upstreamRef": {"upstreamRef": {"name": name}}}}]},
    }))
    .expect("object");
    let msg = forbidden(
        dave.create(&Default::default(), &clone).await,
        "dave clones",
    );
    assert!(
        msg.contains("User \"dave\" cannot get resource \"packagerevisions\"")
            && msg.ends_with("a clone reads its upstream"),
        "{msg}"
    );
    let one = format!("--resource-name={name}");
    k(&[
        "create",
        "role",
        "read-one",
        "--verb=get",
        "--resource=packagerevisions.porch.kpt.dev",
        &one,
        "-n",
        "default",
    ]);
    k(&[
        "create",
        "rolebinding",
        "read-one",
        "--role=read-one",
        "--user=dave",
        "-n",
        "default",
    ]);
    let created = dave
        .create(&Default::default(), &clone)
        .await
        .expect("dave clones what he may read");
    assert_eq!(created.data["spec"]["packageName"], "copy");

    // Moving his Draft to another upstream revision (an appended `update` task) reads that
    // revision too: refused until he may get it.
    let copy = common::porch::new_revision(
        "team",
        "pkg",
        "ws2",
        json!([{"type": "edit", "edit": {"sourceRef": {"name": name}}}]),
    );
    let v2 = common::porch::name(
        &alice
            .create(&Default::default(), &copy)
            .await
            .expect("alice copies"),
    );
    propose(&alice, &v2).await;
    set_approval(&bob, &v2, "Published")
        .await
        .expect("bob approves v2");
    let draft = common::porch::name(&created);
    let own = format!("--resource-name={draft}");
    k(&[
        "create",
        "role",
        "own-draft",
        "--verb=get,update",
        "--resource=packagerevisions.porch.kpt.dev",
        &own,
        "-n",
        "default",
    ]);
    k(&[
        "create",
        "rolebinding",
        "own-draft",
        "--role=own-draft",
        "--user=dave",
        "-n",
        "default",
    ]);
    let mut moved = dave.get(&draft).await.expect("dave reads his draft");
    moved.data["spec"]["tasks"]
        .as_array_mut()
        .expect("tasks")
        .push(json!({"type": "update", "update": {"upstreamRef": {"upstreamRef": {"name": v2}}}}));
    let msg = forbidden(
        dave.replace(&draft, &Default::default(), &moved).await,
        "dave moves his draft",
    );
    assert!(
        msg.contains("User \"dave\" cannot get resource \"packagerevisions\" in API group \"porch.kpt.dev\" in the namespace \"default\"")
            && msg.contains(&format!("\"{v2}\""))
            && msg.ends_with("an update reads its new upstream"),
        "{msg}"
    );
    let two = format!("--resource-name={v2}");
    k(&[
        "create",
        "role",
        "read-two",
        "--verb=get",
        "--resource=packagerevisions.porch.kpt.dev",
        &two,
        "-n",
        "default",
    ]);
    k(&[
        "create",
        "rolebinding",
        "read-two",
        "--role=read-two",
        "--user=dave",
        "-n",
        "default",
    ]);
    let moved = dave
        .replace(&draft, &Default::default(), &moved)
        .await
        .expect("dave moves his draft to what he may read");
    assert_eq!(moved.data["spec"]["tasks"][1]["type"], "update");
}
