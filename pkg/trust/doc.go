// Package trust merges PEM CA certificates from several sources into one
// deterministic CA bundle, the file a server reads through SSL_CERT_FILE.
//
// The package is pure: it has no Kubernetes imports and does no I/O. Callers
// pass the content of ConfigMaps (or any other source) as plain maps, plus
// certificates already in DER form such as the public root store.
//
// # Rules
//
//   - Values are parsed with encoding/pem. CRLF line endings and text between
//     blocks (for example the "# Subject:" comments of system bundles) are
//     accepted and dropped.
//   - Only CERTIFICATE blocks are used. A block of any other type (PRIVATE
//     KEY, RSA PRIVATE KEY, EC PRIVATE KEY, CERTIFICATE REQUEST, ...) is never
//     copied, and its content never appears in an error or warning: messages
//     name only the block's type and its 1-based index.
//   - Every CERTIFICATE block must parse with x509.ParseCertificate.
//   - A Source is either strict (the user named it: any problem is a
//     *SourceError and Merge returns no bundle) or lenient (auto-detected:
//     a bad block or a missing key is skipped with a Warning).
//   - Expired and not-yet-valid certificates are kept, with a Warning.
//     Non-CA (leaf) certificates are kept without a warning, because users
//     do pin leaf certificates of servers they talk to.
//   - Certificates are deduplicated by the SHA-256 of their DER and written
//     sorted by that hash, re-encoded as standard PEM with no text between
//     blocks. The output therefore depends only on the set of certificates,
//     not on the order of sources, keys or map iteration.
//   - A result larger than Options.MaxBytes is a *TooLargeError.
//
// ContentHash gives a hash of a ConfigMap's content (not its metadata),
// suitable for a pod-template annotation that rolls pods when the content
// changes.
package trust
