//! TLS to PostgreSQL, on rustls (the TLS stack the rest of porch-server uses).
//!
//! libpq's `sslmode` meanings are kept, so a URL copied from a `psql` setup means the same:
//! * `disable`: plain TCP; `prefer` (the default): TLS when the server offers it;
//!   `require`: TLS or nothing. Neither checks the server's certificate, unless
//!   `sslrootcert` is given, which makes them `verify-ca` (as libpq does with a root file);
//! * `verify-ca`: TLS, the certificate must chain to `sslrootcert` (or, without it, to the
//!   system's roots); `verify-full`: that, and it must name the host connected to.
//!
//! The driver knows only `disable`/`prefer`/`require` and rejects unknown keys, so
//! [`TlsSettings::split`] takes `sslrootcert` and the `verify-*` modes out of the URL first
//! (leaving `sslmode=require`).

use std::future::Future;
use std::io;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

use crate::error::PgError;

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Encryption only (`prefer`, `require` without `sslrootcert`).
    None,
    /// The chain (`verify-ca`).
    Ca,
    /// The chain and the host name (`verify-full`).
    Full,
}

/// What the URL asked of TLS beyond what the driver parses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub verify: Verify,
    pub root_cert: Option<PathBuf>,
}

impl TlsSettings {
    /// Splits `url` (URL or key=value form) into what the driver parses and the TLS settings.
    pub fn split(url: &str) -> (String, TlsSettings) {
        let mut settings = TlsSettings {
            verify: Verify::None,
            root_cert: None,
        };
        let mut keep = |param: &str| -> Option<String> {
            let (key, value) = param.split_once('=')?;
            match (key.trim(), value.trim()) {
                ("sslrootcert", path) => {
                    settings.root_cert = Some(PathBuf::from(path));
                    None
                }
                ("sslmode", "verify-ca") => {
                    settings.verify = Verify::Ca;
                    Some("sslmode=require".into())
                }
                ("sslmode", "verify-full") => {
                    settings.verify = Verify::Full;
                    Some("sslmode=require".into())
                }
                _ => Some(param.to_owned()),
            }
        };
        let cleaned = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            match url.split_once('?') {
                Some((base, query)) => {
                    let params: Vec<String> = query
                        .split('&')
                        .filter_map(|p| {
                            if p.contains('=') {
                                keep(p)
                            } else {
                                Some(p.into())
                            }
                        })
                        .collect();
                    if params.is_empty() {
                        base.to_owned()
                    } else {
                        format!("{base}?{}", params.join("&"))
                    }
                }
                None => url.to_owned(),
            }
        } else {
            url.split_whitespace()
                .filter_map(|p| {
                    if p.contains('=') {
                        keep(p)
                    } else {
                        Some(p.into())
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        // A root file makes `require` check the chain, as in libpq.
        if settings.verify == Verify::None && settings.root_cert.is_some() {
            settings.verify = Verify::Ca;
        }
        (cleaned, settings)
    }

    /// The connector for these settings.
    pub fn connector(&self) -> Result<MakeRustls, PgError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| PgError::Config(format!("TLS: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> = match self.verify {
            Verify::None => Arc::new(AnyCertificate(provider)),
            Verify::Ca | Verify::Full => {
                let roots = Arc::new(self.roots()?);
                let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| PgError::Config(format!("TLS: {e}")))?;
                if self.verify == Verify::Full {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
        };
        let config = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustls(Arc::new(config)))
    }

    fn roots(&self) -> Result<RootCertStore, PgError> {
        let mut roots = RootCertStore::empty();
        match &self.root_cert {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| PgError::Config(format!("sslrootcert {}: {e}", path.display())))?;
                let (added, _) = roots.add_parsable_certificates(certs);
                if added == 0 {
                    return Err(PgError::Config(format!(
                        "sslrootcert {} holds no certificate",
                        path.display()
                    )));
                }
            }
            None => {
                let native = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(native.certs);
            }
        }
        Ok(roots)
    }
}

/// Accepts any certificate (libpq's `require`), still checking that the server holds its key.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must verify; the name in the certificate is not compared.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // webpki checks the chain before the name: a name error means the chain verified.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
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

/// The driver's TLS connector factory, on rustls. Used whatever the `sslmode`: with `disable`
/// the driver never calls it.
#[derive(Clone)]
pub struct MakeRustls(Arc<rustls::ClientConfig>);

impl<S> MakeTlsConnect<S> for MakeRustls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type TlsConnect = RustlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> io::Result<RustlsConnect> {
        // The driver asks for every host, TLS or not; a unix socket's "domain" is its path,
        // which is no server name: that fails only if a handshake is attempted.
        let name = ServerName::try_from(domain.to_owned()).map_err(|e| e.to_string());
        Ok(RustlsConnect {
            config: self.0.clone(),
            name,
        })
    }
}

/// One connection's handshake.
pub struct RustlsConnect {
    config: Arc<rustls::ClientConfig>,
    name: Result<ServerName<'static>, String>,
}

impl<S> TlsConnect<S> for RustlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = RustlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<RustlsStream<S>>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let name = self
                .name
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let stream = tokio_rustls::TlsConnector::from(self.config)
                .connect(name, stream)
                .await?;
            Ok(RustlsStream(Box::new(stream)))
        })
    }
}

/// A TLS connection to PostgreSQL.
pub struct RustlsStream<S>(Box<tokio_rustls::client::TlsStream<S>>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0).poll_shutdown(cx)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM channel binding is optional (`channel_binding=prefer`); not offered.
        ChannelBinding::none()
    }
}

/// How to reach the database: the driver's settings and the TLS connector.
#[derive(Clone)]
pub struct PgConnect {
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: MakeRustls,
}

impl std::fmt::Debug for PgConnect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConnect")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl PgConnect {
    /// Opens one connection (its driver future must be polled, e.g. spawned).
    pub async fn connect(
        &self,
    ) -> Result<
        (
            tokio_postgres::Client,
            tokio_postgres::Connection<
                tokio_postgres::Socket,
                RustlsStream<tokio_postgres::Socket>,
            >,
        ),
        tokio_postgres::Error,
    > {
        self.config.connect(self.tls.clone()).await
    }

    /// The driver's settings.
    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_modes_and_the_root_file_leave_the_url() {
        let (url, s) = TlsSettings::split(
            "postgres://porch@db:5432/porch?sslmode=verify-full&sslrootcert=/etc/ca.crt&application_name=x",
        );
        assert_eq!(
            url,
            "postgres://porch@db:5432/porch?sslmode=require&application_name=x"
        );
        assert_eq!(s.verify, Verify::Full);
        assert_eq!(s.root_cert, Some(PathBuf::from("/etc/ca.crt")));

        let (url, s) = TlsSettings::split("postgres://porch@db/porch?sslmode=require");
        assert_eq!(url, "postgres://porch@db/porch?sslmode=require");
        assert_eq!(s.verify, Verify::None);

        let (url, s) = TlsSettings::split("postgres://porch@db/porch?sslrootcert=/ca.pem");
        assert_eq!(url, "postgres://porch@db/porch");
        assert_eq!(s.verify, Verify::Ca, "a root file checks the chain");

        let (url, s) = TlsSettings::split("host=db user=porch sslmode=verify-ca");
        assert_eq!(url, "host=db user=porch sslmode=require");
        assert_eq!(s.verify, Verify::Ca);
    }

    #[test]
    fn a_missing_root_file_is_a_configuration_error() {
        let (_, s) =
            TlsSettings::split("postgres://db/p?sslmode=verify-ca&sslrootcert=/nonexistent");
        assert!(matches!(s.connector(), Err(PgError::Config(m)) if m.contains("/nonexistent")));
    }
}
