//! The HTTPS listener: rustls asking for (not requiring) a client certificate verified against
//! the client CA, and an acceptor that hands the verified chain to every request of the
//! connection (`porch_apiserver::auth::PeerCertificates` in the extensions), where the
//! authenticator reads the user from it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use anyhow::Context as _;
use axum_server::accept::{Accept, NoDelayAcceptor};
use axum_server::tls_rustls::{RustlsAcceptor, RustlsConfig};
use porch_apiserver::auth::PeerCertificates;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

/// The rustls settings: the serving certificate, and client certificates verified against
/// `client_ca_pem` when given (a client without one still connects and may use a token).
pub fn server_config(
    cert_pem: &str,
    key_pem: &str,
    client_ca_pem: Option<&str>,
) -> anyhow::Result<Listener> {
    let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .context("invalid TLS certificate")?;
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).context("invalid TLS key")?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let mut client_verifier = None;
    let builder = match client_ca_pem {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                roots
                    .add(c.context("invalid client CA certificate")?)
                    .context("invalid client CA certificate")?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .allow_unauthenticated()
            .build()
            .context("client certificate verifier")?;
            client_verifier = Some(verifier.clone());
            builder.with_client_cert_verifier(Arc::new(Lenient(verifier)))
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .context("invalid TLS certificate or key")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Listener {
        config: RustlsConfig::from_config(Arc::new(config)),
        client_verifier,
    })
}

/// The TLS settings and the client verifier the acceptor judges chains with.
pub struct Listener {
    pub config: RustlsConfig,
    pub client_verifier: Option<Arc<dyn ClientCertVerifier>>,
}

/// Takes any client certificate whose key the client proves to hold (the handshake signature
/// is still checked); the chain is judged after the handshake, so that a bad one answers 401.
#[derive(Debug)]
struct Lenient(Arc<dyn ClientCertVerifier>);

impl ClientCertVerifier for Lenient {
    fn offer_client_auth(&self) -> bool {
        true
    }
    fn client_auth_mandatory(&self) -> bool {
        false
    }
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.0.root_hint_subjects()
    }
    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The verdict on a client chain: `None` when it verifies against the client CA now.
fn judge(verifier: &dyn ClientCertVerifier, chain: &[CertificateDer<'_>]) -> Option<String> {
    let (leaf, intermediates) = chain.split_first()?;
    match verifier.verify_client_cert(leaf, intermediates, UnixTime::now()) {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// TLS with TCP_NODELAY, then the verified client chain attached to the connection's service.
#[derive(Clone)]
pub struct ClientCertAcceptor {
    inner: RustlsAcceptor<NoDelayAcceptor>,
    verifier: Option<Arc<dyn ClientCertVerifier>>,
}

impl ClientCertAcceptor {
    pub fn new(listener: Listener) -> Self {
        Self {
            inner: RustlsAcceptor::new(listener.config).acceptor(NoDelayAcceptor::new()),
            verifier: listener.client_verifier,
        }
    }
}

type Accepted<S> = io::Result<(TlsStream<TcpStream>, WithPeer<S>)>;

impl<S> Accept<TcpStream, S> for ClientCertAcceptor
where
    S: Send + 'static,
{
    type Stream = TlsStream<TcpStream>;
    type Service = WithPeer<S>;
    type Future = Pin<Box<dyn Future<Output = Accepted<S>> + Send>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let handshake = self.inner.accept(stream, service);
        let verifier = self.verifier.clone();
        Box::pin(async move {
            let (stream, service) = handshake.await?;
            let peer = match (&verifier, stream.get_ref().1.peer_certificates()) {
                (Some(verifier), Some(chain)) if !chain.is_empty() => Some(PeerCertificates {
                    rejected: judge(verifier.as_ref(), chain),
                    chain: Arc::new(chain.iter().map(|c| c.to_vec()).collect()),
                }),
                _ => None,
            };
            Ok((
                stream,
                WithPeer {
                    inner: service,
                    peer,
                },
            ))
        })
    }
}

/// A connection's service that puts the client chain into each request's extensions.
#[derive(Clone)]
pub struct WithPeer<S> {
    inner: S,
    peer: Option<PeerCertificates>,
}

impl<S, B> tower::Service<http::Request<B>> for WithPeer<S>
where
    S: tower::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        if let Some(peer) = &self.peer {
            req.extensions_mut().insert(peer.clone());
        }
        self.inner.call(req)
    }
}
