//! TLS for the PostgreSQL store, with libpq's `sslmode` and `sslrootcert`
//! (PostgreSQL documentation, "SSL Support" in libpq): managed PostgreSQL
//! services accept only TLS connections, and a fleet's database is reached
//! over networks nobody should trust with its password.
//!
//! | sslmode | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `allow`, `prefer` (the default) | where the server offers it | not checked |
//! | `require` | always | not checked; with `sslrootcert=`, signed by that CA (libpq's rule) |
//! | `verify-ca` | always | signed by the CA (`sslrootcert=`, else `~/.postgresql/root.crt`) |
//! | `verify-full` | always | as `verify-ca`, and naming the host connected to |
//!
//! A mode that demands TLS never falls back to plain text: a server that
//! offers none is an error. The driver (tokio-postgres) parses neither
//! `sslrootcert` nor the verifying modes, so [`split`] takes them out of
//! the URL and the connector here applies them (rustls, its ring provider).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::PathBuf;
use std::sync::Arc;

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    Disable,
    Allow,
    #[default]
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(v: &str) -> Result<SslMode, String> {
        Ok(match v {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            other => {
                return Err(format!(
                    "sslmode={other}: not one of disable, allow, prefer, require, verify-ca, verify-full"
                ))
            }
        })
    }

    /// Whether a connection without TLS is refused.
    pub fn demands_tls(self) -> bool {
        matches!(self, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull)
    }

    /// The driver's own setting: whether to ask for TLS and insist on it.
    pub fn driver(self) -> tokio_postgres::config::SslMode {
        use tokio_postgres::config::SslMode as D;
        match self {
            SslMode::Disable => D::Disable,
            // The driver has no "allow" (plain first): either way a
            // connection with or without TLS is taken.
            SslMode::Allow | SslMode::Prefer => D::Prefer,
            _ => D::Require,
        }
    }
}

/// The TLS settings of a URL.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tls {
    pub mode: SslMode,
    /// `sslrootcert=`: the CA certificates (PEM) the server's must chain to.
    pub root_cert: Option<PathBuf>,
}

/// The URL without the parameters the driver does not know (`sslmode`,
/// `sslrootcert`), and the TLS settings they gave. Client certificates
/// (`sslcert`, `sslkey`) are refused: hwcal does not send one, and a server
/// that wants one would refuse it later with a less clear message.
pub fn split(url: &str) -> Result<(String, Tls), String> {
    if !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
        return split_key_values(url);
    }
    // The query starts at the first '?' after the credentials (a password
    // may hold one only percent-encoded, as the driver requires anyway).
    let after_at = url.rfind('@').map_or(0, |i| i + 1);
    let Some(q) = url[after_at..].find('?').map(|i| after_at + i) else {
        return Ok((url.to_string(), Tls::default()));
    };
    let mut tls = Tls::default();
    let mut kept: Vec<&str> = Vec::new();
    for pair in url[q + 1..].split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sslmode" => tls.mode = SslMode::parse(&percent_decode(v)?)?,
            "sslrootcert" => tls.root_cert = Some(PathBuf::from(percent_decode(v)?)),
            "sslcert" | "sslkey" | "sslpassword" => {
                return Err(format!(
                    "{k}=: client certificates are not supported (hwcal sends none)"
                ))
            }
            _ => kept.push(pair),
        }
    }
    let base = &url[..q];
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((url, tls))
}

/// [`split`] of libpq's `key=value` form (`host=H dbname=D sslmode=…`):
/// the TLS keys taken out where their values are unquoted words (a quoted
/// value is left to the driver, which refuses what it does not know).
fn split_key_values(conn: &str) -> Result<(String, Tls), String> {
    let mut tls = Tls::default();
    let mut kept: Vec<&str> = Vec::new();
    let mut taken = false;
    for word in conn.split_whitespace() {
        match word.split_once('=') {
            Some(("sslmode", v)) if !v.starts_with('\'') => {
                tls.mode = SslMode::parse(v)?;
                taken = true;
            }
            Some(("sslrootcert", v)) if !v.starts_with('\'') && !v.is_empty() => {
                tls.root_cert = Some(PathBuf::from(v));
                taken = true;
            }
            Some(("sslcert" | "sslkey" | "sslpassword", _)) => {
                return Err("client certificates are not supported (hwcal sends none)".into())
            }
            _ => kept.push(word),
        }
    }
    // Rebuilt only where something was taken out: a quoted value keeps its
    // spaces otherwise.
    Ok((if taken { kept.join(" ") } else { conn.to_string() }, tls))
}

/// A URL parameter's value with its %XX escapes decoded.
fn percent_decode(v: &str) -> Result<String, String> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = v
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("{v}: a % not followed by two hex digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{v}: not UTF-8 once decoded"))
}

/// The connector for `tls`: `None` for `sslmode=disable` (no TLS).
pub fn connector(tls: &Tls) -> Result<Option<tokio_postgres_rustls::MakeRustlsConnect>, String> {
    if tls.mode == SslMode::Disable {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verify = match tls.mode {
        SslMode::VerifyCa | SslMode::VerifyFull => Some(roots(tls)?),
        // libpq: `require` with a root certificate named checks the chain.
        SslMode::Require => tls.root_cert.as_ref().map(|_| roots(tls)).transpose()?,
        _ => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        None => Arc::new(Unchecked(Arc::clone(&provider))),
        Some(r) => {
            let web = WebPkiServerVerifier::builder_with_provider(Arc::new(r), Arc::clone(&provider))
                .build()
                .map_err(|e| format!("the CA certificates: {e}"))?;
            if tls.mode == SslMode::VerifyFull {
                web
            } else {
                Arc::new(ChainOnly(web))
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Some(tokio_postgres_rustls::MakeRustlsConnect::new(config)))
}

/// The CA certificates the server's must chain to: `sslrootcert=`, else
/// libpq's default `~/.postgresql/root.crt`.
fn roots(tls: &Tls) -> Result<RootCertStore, String> {
    let path = match &tls.root_cert {
        Some(p) if p.as_os_str() == "system" => {
            return Err("sslrootcert=system: the system's CA store is not read; name the CA's file".into())
        }
        Some(p) => p.clone(),
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            match home
                .map(|h| h.join(".postgresql/root.crt"))
                .filter(|p| p.is_file())
            {
                Some(p) => p,
                None => {
                    return Err(format!(
                        "sslmode={}: checking the server's certificate needs its CA: add sslrootcert=FILE \
                         (PEM) to the URL, or put it in ~/.postgresql/root.crt",
                        mode_name(tls.mode)
                    ))
                }
            }
        }
    };
    let f = std::fs::File::open(&path).map_err(|e| format!("sslrootcert={}: {e}", path.display()))?;
    let mut store = RootCertStore::empty();
    let mut read = std::io::BufReader::new(f);
    for c in rustls_pemfile::certs(&mut read) {
        let c = c.map_err(|e| format!("sslrootcert={}: {e}", path.display()))?;
        store
            .add(c)
            .map_err(|e| format!("sslrootcert={}: {e}", path.display()))?;
    }
    if store.is_empty() {
        return Err(format!(
            "sslrootcert={}: no PEM certificate in it",
            path.display()
        ));
    }
    Ok(store)
}

fn mode_name(m: SslMode) -> &'static str {
    match m {
        SslMode::Disable => "disable",
        SslMode::Allow => "allow",
        SslMode::Prefer => "prefer",
        SslMode::Require => "require",
        SslMode::VerifyCa => "verify-ca",
        SslMode::VerifyFull => "verify-full",
    }
}

/// What a failed connection's message means for TLS, in a user's words
/// (appended to the driver's own): a server that takes only TLS, and the
/// two ways a certificate is refused.
pub fn hint(message: &str, tls: &Tls) -> Option<String> {
    if message.contains("no encryption") && !tls.mode.demands_tls() {
        return Some(
            "the server accepts only TLS connections: add sslmode=verify-full&sslrootcert=CA-FILE (or \
             sslmode=require, which checks no certificate) to the URL"
                .into(),
        );
    }
    if message.contains("UnknownIssuer") || message.contains("BadSignature") {
        let ca = tls
            .root_cert
            .as_ref()
            .map_or("~/.postgresql/root.crt".to_string(), |p| p.display().to_string());
        return Some(format!(
            "the server's certificate is not signed by the CA in {ca}: refused"
        ));
    }
    if message.contains("NotValidForName") || message.contains("not valid for name") {
        return Some(
            "the server's certificate does not name the host in the URL: refused (verify-full checks the \
             name; connect by the name the certificate gives)"
                .into(),
        );
    }
    None
}

/// `require` and `prefer` without a CA: the handshake's signatures are
/// checked (the connection is encrypted to whoever holds the certificate's
/// key), the certificate itself is not — libpq's behaviour for these modes.
#[derive(Debug)]
struct Unchecked(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain to the CA is checked, the name is not.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_loses_what_the_driver_does_not_know() {
        let (u, t) = split(
            "postgres://u:p@h:5432/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(u, "postgres://u:p@h:5432/db?application_name=x");
        assert_eq!(t.mode, SslMode::VerifyFull);
        assert_eq!(t.root_cert, Some(PathBuf::from("/tmp/ca.pem")));
        let (u, t) = split("postgres://u:p@h/db?sslmode=require").unwrap();
        assert_eq!(
            (u.as_str(), t.mode, t.root_cert),
            ("postgres://u:p@h/db", SslMode::Require, None)
        );
        // No query: the default, prefer.
        let (u, t) = split("postgres://u:p@h/db").unwrap();
        assert_eq!((u.as_str(), t.mode), ("postgres://u:p@h/db", SslMode::Prefer));
        // A '?' in the password's place is not the query.
        let (u, _) = split("postgres://u:a?b@h/db").unwrap();
        assert_eq!(u, "postgres://u:a?b@h/db");
        // libpq's key=value form.
        let (c, t) = split("host=h dbname=d sslmode=verify-ca sslrootcert=/etc/ca.pem user=u").unwrap();
        assert_eq!(c, "host=h dbname=d user=u");
        assert_eq!(
            (t.mode, t.root_cert),
            (SslMode::VerifyCa, Some(PathBuf::from("/etc/ca.pem")))
        );
    }

    #[test]
    fn bad_tls_parameters_are_refused_with_their_name() {
        assert!(split("postgres://h/db?sslmode=maybe")
            .unwrap_err()
            .contains("sslmode=maybe"));
        assert!(split("postgres://h/db?sslcert=c.pem")
            .unwrap_err()
            .contains("client certificates"));
        assert!(split("postgres://h/db?sslrootcert=%zz")
            .unwrap_err()
            .contains("hex"));
    }

    #[test]
    fn only_the_verifying_modes_need_a_ca_and_disable_needs_no_connector() {
        assert!(connector(&Tls::default()).unwrap().is_some());
        let off = Tls {
            mode: SslMode::Disable,
            root_cert: None,
        };
        assert!(connector(&off).unwrap().is_none());
        let missing = Tls {
            mode: SslMode::VerifyFull,
            root_cert: Some(PathBuf::from("/nonexistent/ca.pem")),
        };
        assert!(connector(&missing).err().unwrap().contains("/nonexistent/ca.pem"));
        let system = Tls {
            mode: SslMode::VerifyCa,
            root_cert: Some(PathBuf::from("system")),
        };
        assert!(connector(&system).err().unwrap().contains("system"));
        assert!(SslMode::VerifyCa.demands_tls() && !SslMode::Prefer.demands_tls());
    }
}
