//! Authentication without a certificate authority: the receiver makes a self-signed certificate
//! once (kept beside its output, so the fingerprint survives restarts and a transfer can
//! resume), prints its SHA-256 fingerprint, and the sender accepts that certificate and no
//! other. The TLS 1.3 handshake's signature still proves the receiver holds the key.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use ccbench_files::{read_input, InputKind};

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};

/// The application protocol both ends name in the handshake.
pub const ALPN: &[u8] = b"ccbench-quic/1";
/// The name in the certificate (the sender connects under it; the pin is what counts).
pub const SERVER_NAME: &str = "ccbench-quic";
/// Where the receiver keeps its identity, under its output directory.
pub const IDENTITY_DIR: &str = ".ccbench-quic";

/// The receiver's certificate and key.
pub struct Identity {
    pub cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
}

impl Identity {
    /// The identity kept in `dir/.ccbench-quic`, made there on first use.
    pub fn load_or_create(dir: &Path) -> Result<Self, String> {
        let home = dir.join(IDENTITY_DIR);
        let (cert_path, key_path) = (home.join("cert.der"), home.join("key.der"));
        // Our own folder, checked before anything is read from it or made in it: a link planted
        // at its name would lend us another identity and take our partial files elsewhere.
        fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        ccbench_files::own_folder(&home).map_err(|e| e.to_string())?;
        let read = |path: &Path| read_input(path, InputKind::CERTIFICATE).map_err(|e| e.to_string());
        if cert_path.exists() && key_path.exists() {
            return Ok(Self { cert: read(&cert_path)?.into(), key: read(&key_path)?.into() });
        }
        let made = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
            .map_err(|e| format!("making a certificate: {e}"))?;
        let key = made.signing_key.serialize_der();
        write_private(&key_path, &key)?;
        ccbench_files::write_atomic(&cert_path, made.cert.der()).map_err(|e| e.to_string())?;
        Ok(Self { cert: made.cert.der().clone(), key: key.into() })
    }

    /// The certificate's SHA-256, what the sender pins.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.cert)
    }

    /// quinn's server configuration for this identity.
    pub fn server_config(&self) -> Result<quinn::ServerConfig, String> {
        let mut tls = rustls::ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(vec![self.cert.clone()], PrivateKeyDer::Pkcs8(self.key.clone_key()))
            .map_err(|e| format!("the certificate in {IDENTITY_DIR}: {e}"))?;
        tls.alpn_protocols = vec![ALPN.to_vec()];
        let quic = QuicServerConfig::try_from(tls).map_err(|e| e.to_string())?;
        Ok(quinn::ServerConfig::with_crypto(Arc::new(quic)))
    }
}

/// The key, created with mode 0600 beside its path and renamed into place.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut new = ccbench_files::NewFile::create_mode(path, 0o600).map_err(|e| e.to_string())?;
    new.write_all(bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    new.commit().map(drop).map_err(|e| e.to_string())
}

/// Lower-case hex SHA-256 of a certificate's DER bytes.
pub fn fingerprint(cert: &CertificateDer<'_>) -> String {
    hex(&Sha256::digest(cert.as_ref()))
}

/// Lower-case hex of a digest, as fingerprints and content hashes are written.
pub(crate) fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fingerprint as a user may paste it (any case, `:` separators, a `sha256:` prefix), checked.
pub fn parse_fingerprint(text: &str) -> Result<String, String> {
    let hex: String = text.trim().trim_start_matches("sha256:").chars().filter(|c| *c != ':').collect();
    let hex = hex.to_ascii_lowercase();
    if hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(format!("--fingerprint {text:?} is not a SHA-256 (64 hex digits, as the receiver prints it)"))
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// quinn's client configuration accepting only the certificate with this fingerprint.
pub fn client_config(fingerprint: &str) -> Result<quinn::ClientConfig, String> {
    let provider = provider();
    let verifier = Arc::new(Pinned { fingerprint: fingerprint.to_string(), provider: Arc::clone(&provider) });
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let quic = QuicClientConfig::try_from(tls).map_err(|e| e.to_string())?;
    Ok(quinn::ClientConfig::new(Arc::new(quic)))
}

/// Accepts the one certificate whose SHA-256 is pinned; signatures are checked as usual.
#[derive(Debug)]
struct Pinned {
    fingerprint: String,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let got = fingerprint(end_entity);
        if got == self.fingerprint {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::General(format!(
                "the receiver's certificate has fingerprint {got}, not the pinned {}",
                self.fingerprint
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_as_users_paste_them() {
        let hex = "ab".repeat(32);
        assert_eq!(parse_fingerprint(&hex).unwrap(), hex);
        let colons = hex
            .to_uppercase()
            .as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect::<Vec<_>>()
            .join(":");
        assert_eq!(parse_fingerprint(&format!("sha256:{colons}")).unwrap(), hex);
        assert!(parse_fingerprint("abc").unwrap_err().starts_with("--fingerprint \"abc\""));
    }

    #[test]
    fn the_identity_is_made_once_and_kept() {
        let dir = std::env::temp_dir().join(format!("ccbench-quic-tls-{}", std::process::id()));
        let first = Identity::load_or_create(&dir).unwrap();
        let again = Identity::load_or_create(&dir).unwrap();
        assert_eq!(first.fingerprint(), again.fingerprint());
        assert_eq!(first.fingerprint().len(), 64);
        first.server_config().unwrap();
        fs::remove_dir_all(&dir).unwrap();
    }
}
