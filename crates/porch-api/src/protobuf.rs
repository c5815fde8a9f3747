//! Decoding of the Kubernetes protobuf wire format for the few core kinds kubectl sends that way
//! (`kubectl create namespace`, `kubectl create secret …` use protobuf for built-in types).
//!
//! Only decoding, only the fields those kinds have; the result is the JSON form.

mod rbac;
mod review;

pub use rbac::decode_rbac;
pub use review::decode_review;

use base64::Engine;
use serde_json::{Map, Value, json};

/// `k8s\0`: the prefix of every Kubernetes protobuf body.
const MAGIC: &[u8] = b"k8s\x00";

/// A protobuf decoding failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid protobuf body: {0}")]
pub struct ProtobufError(pub String);

fn err(m: &str) -> ProtobufError {
    ProtobufError(m.to_string())
}

struct Reader<'a> {
    buf: &'a [u8],
}

enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Other,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self
                .buf
                .split_first()
                .ok_or_else(|| err("truncated varint"))?;
            self.buf = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(err("varint too long"))
    }

    fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, ProtobufError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => Field::Varint(self.varint()?),
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| err("length overflow"))?;
                if len > self.buf.len() {
                    return Err(err("truncated field"));
                }
                let (b, rest) = self.buf.split_at(len);
                self.buf = rest;
                Field::Bytes(b)
            }
            1 => {
                self.skip(8)?;
                Field::Other
            }
            5 => {
                self.skip(4)?;
                Field::Other
            }
            _ => return Err(err("unsupported wire type")),
        };
        Ok(Some((key >> 3, field)))
    }

    fn skip(&mut self, n: usize) -> Result<(), ProtobufError> {
        if self.buf.len() < n {
            return Err(err("truncated field"));
        }
        self.buf = &self.buf[n..];
        Ok(())
    }
}

fn fields(buf: &[u8]) -> Result<Vec<(u64, Field<'_>)>, ProtobufError> {
    let mut r = Reader { buf };
    let mut out = Vec::new();
    while let Some(f) = r.next()? {
        out.push(f);
    }
    Ok(out)
}

fn string(b: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(b.to_vec()).map_err(|_| err("invalid UTF-8 string"))
}

/// The string fields of a message named by field number (`names[0]` is field 1); a repeated
/// field keeps its last value, other fields are skipped.
fn string_fields(b: &[u8], names: &[&str]) -> Result<Map<String, Value>, ProtobufError> {
    let mut m = Map::new();
    for (name, v) in named_bytes(b, names)? {
        m.insert(name.to_string(), string(v)?.into());
    }
    Ok(m)
}

/// The repeated string fields of a message named by field number, as lists.
fn string_lists(b: &[u8], names: &[&str]) -> Result<Map<String, Value>, ProtobufError> {
    let mut m = Map::new();
    for (name, v) in named_bytes(b, names)? {
        if let Value::Array(a) = m
            .entry(name.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            a.push(string(v)?.into());
        }
    }
    Ok(m)
}

/// The length-delimited fields of `b` that `names` names (field `n` is `names[n - 1]`).
fn named_bytes<'a, 'n>(
    b: &'a [u8],
    names: &[&'n str],
) -> Result<Vec<(&'n str, &'a [u8])>, ProtobufError> {
    Ok(fields(b)?
        .into_iter()
        .filter_map(|(n, f)| {
            let Field::Bytes(v) = f else { return None };
            let name = usize::try_from(n)
                .ok()
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| names.get(i))?;
            Some((*name, v))
        })
        .collect())
}

/// A `map<string, V>` entry: `{key = 1, value = 2}`.
fn map_entry(b: &[u8]) -> Result<(String, &[u8]), ProtobufError> {
    let mut key = String::new();
    let mut value: &[u8] = &[];
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(k)) => key = string(k)?,
            (2, Field::Bytes(v)) => value = v,
            _ => {}
        }
    }
    Ok((key, value))
}

fn object_meta(b: &[u8]) -> Result<Value, ProtobufError> {
    let mut m = Map::new();
    let mut labels = Map::new();
    let mut annotations = Map::new();
    let mut finalizers = Vec::new();
    for (n, f) in fields(b)? {
        match (n, f) {
            (1, Field::Bytes(v)) => {
                m.insert("name".into(), string(v)?.into());
            }
            (2, Field::Bytes(v)) => {
                m.insert("generateName".into(), string(v)?.into());
            }
            (3, Field::Bytes(v)) => {
                m.insert("namespace".into(), string(v)?.into());
            }
            (5, Field::Bytes(v)) => {
                m.insert("uid".into(), string(v)?.into());
            }
            (6, Field::Bytes(v)) => {
                m.insert("resourceVersion".into(), string(v)?.into());
            }
            (11, Field::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                labels.insert(k, string(val)?.into());
            }
            (12, Field::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                annotations.insert(k, string(val)?.into());
            }
            (14, Field::Bytes(v)) => finalizers.push(Value::String(string(v)?)),
            _ => {}
        }
    }
    if !labels.is_empty() {
        m.insert("labels".into(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        m.insert("annotations".into(), Value::Object(annotations));
    }
    if !finalizers.is_empty() {
        m.insert("finalizers".into(), Value::Array(finalizers));
    }
    Ok(Value::Object(m))
}

/// Splits the `runtime.Unknown` envelope: returns (apiVersion, kind, raw object bytes).
fn envelope(body: &[u8]) -> Result<(String, String, &[u8]), ProtobufError> {
    let inner = body
        .strip_prefix(MAGIC)
        .ok_or_else(|| err("missing the k8s protobuf prefix"))?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for (n, f) in fields(inner)? {
        match (n, f) {
            (1, Field::Bytes(tm)) => {
                for (tn, tf) in fields(tm)? {
                    match (tn, tf) {
                        (1, Field::Bytes(v)) => api_version = string(v)?,
                        (2, Field::Bytes(v)) => kind = string(v)?,
                        _ => {}
                    }
                }
            }
            (2, Field::Bytes(v)) => raw = v,
            _ => {}
        }
    }
    Ok((api_version, kind, raw))
}

/// Decodes a protobuf `v1` `Namespace`, `Secret` or `ConfigMap` into its JSON form.
pub fn decode_core(body: &[u8]) -> Result<Value, ProtobufError> {
    let (api_version, kind, raw) = envelope(body)?;
    let mut obj = json!({"apiVersion": if api_version.is_empty() { "v1".to_string() } else { api_version }, "kind": kind});
    let parts = fields(raw)?;
    match kind.as_str() {
        "Namespace" => {
            for (n, f) in parts {
                match (n, f) {
                    (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
                    (2, Field::Bytes(v)) => {
                        let mut fin = Vec::new();
                        for (sn, sf) in fields(v)? {
                            if let (1, Field::Bytes(s)) = (sn, sf) {
                                fin.push(Value::String(string(s)?));
                            }
                        }
                        obj["spec"] = json!({"finalizers": fin});
                    }
                    _ => {}
                }
            }
        }
        "Secret" => {
            let mut data = Map::new();
            let mut string_data = Map::new();
            for (n, f) in parts {
                match (n, f) {
                    (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
                    (2, Field::Bytes(v)) => {
                        let (k, val) = map_entry(v)?;
                        data.insert(
                            k,
                            base64::engine::general_purpose::STANDARD.encode(val).into(),
                        );
                    }
                    (3, Field::Bytes(v)) => obj["type"] = string(v)?.into(),
                    (4, Field::Bytes(v)) => {
                        let (k, val) = map_entry(v)?;
                        string_data.insert(k, string(val)?.into());
                    }
                    (5, Field::Varint(b)) => obj["immutable"] = (b != 0).into(),
                    _ => {}
                }
            }
            if !data.is_empty() {
                obj["data"] = Value::Object(data);
            }
            if !string_data.is_empty() {
                obj["stringData"] = Value::Object(string_data);
            }
        }
        "ConfigMap" => {
            // k8s.io/api/core/v1 ConfigMap: 1 metadata, 2 data, 3 binaryData, 4 immutable.
            let mut data = Map::new();
            let mut binary = Map::new();
            for (n, f) in parts {
                match (n, f) {
                    (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
                    (2, Field::Bytes(v)) => {
                        let (k, val) = map_entry(v)?;
                        data.insert(k, string(val)?.into());
                    }
                    (3, Field::Bytes(v)) => {
                        let (k, val) = map_entry(v)?;
                        binary.insert(
                            k,
                            base64::engine::general_purpose::STANDARD.encode(val).into(),
                        );
                    }
                    (4, Field::Varint(b)) => obj["immutable"] = (b != 0).into(),
                    _ => {}
                }
            }
            if !data.is_empty() {
                obj["data"] = Value::Object(data);
            }
            if !binary.is_empty() {
                obj["binaryData"] = Value::Object(binary);
            }
        }
        "ServiceAccount" => {
            // k8s.io/api/core/v1 ServiceAccount: 1 metadata, 4 automountServiceAccountToken
            // (secrets and imagePullSecrets are not used by this server).
            for (n, f) in parts {
                match (n, f) {
                    (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
                    (4, Field::Varint(b)) => obj["automountServiceAccountToken"] = (b != 0).into(),
                    _ => {}
                }
            }
        }
        "TokenRequest" => {
            // k8s.io/api/authentication/v1 TokenRequest: 1 metadata, 2 spec {1 audiences,
            // 4 expirationSeconds}.
            let mut audiences = Vec::new();
            let mut spec = Map::new();
            for (n, f) in parts {
                match (n, f) {
                    (1, Field::Bytes(v)) => obj["metadata"] = object_meta(v)?,
                    (2, Field::Bytes(v)) => {
                        for (sn, sf) in fields(v)? {
                            match (sn, sf) {
                                (1, Field::Bytes(a)) => audiences.push(Value::String(string(a)?)),
                                (4, Field::Varint(secs)) => {
                                    spec.insert("expirationSeconds".into(), secs.into());
                                }
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            spec.insert("audiences".into(), Value::Array(audiences));
            obj["spec"] = Value::Object(spec);
        }
        other => {
            return Err(ProtobufError(format!(
                "protobuf is not supported for kind {other:?}; send JSON"
            )));
        }
    }
    Ok(obj)
}

/// Builders of protobuf bodies for the decoders' tests.
#[cfg(test)]
mod testing {
    /// A length-delimited field (short ones only).
    pub fn field(n: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![u8::try_from(n << 3 | 2).expect("small field number")];
        out.push(u8::try_from(bytes.len()).expect("short field"));
        out.extend_from_slice(bytes);
        out
    }

    /// The `k8s\0` envelope of `apiVersion`, `kind` and the raw object.
    pub fn wrap(api_version: &[u8], kind: &[u8], raw: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, api_version), field(2, kind)].concat();
        [super::MAGIC.to_vec(), field(1, &type_meta), field(2, raw)].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::field;
    use super::*;

    #[test]
    fn named_fields_read_singles_and_lists() {
        let b = [
            field(1, b"a"),
            field(3, b"c"),
            field(1, b"b"),
            field(9, b"x"),
        ]
        .concat();
        let one = string_fields(&b, &["first", "second", "third"]).expect("decodes");
        assert_eq!(Value::Object(one), json!({"first": "b", "third": "c"}));
        let lists = string_lists(&b, &["first"]).expect("decodes");
        assert_eq!(Value::Object(lists), json!({"first": ["a", "b"]}));
    }

    #[test]
    fn decodes_a_secret() {
        let meta = [field(1, b"auth"), field(3, b"ns")].concat();
        let entry = [field(1, b"password"), field(2, b"pw")].concat();
        let secret = [field(1, &meta), field(2, &entry), field(3, b"Opaque")].concat();
        let type_meta = [field(1, b"v1"), field(2, b"Secret")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &secret)].concat();
        let v = decode_core(&body).expect("decodes");
        assert_eq!(v["metadata"]["name"], "auth");
        assert_eq!(v["data"]["password"], "cHc=");
        assert_eq!(v["type"], "Opaque");
        assert!(decode_core(b"k8s\x00\x0a\x05").is_err());
    }

    #[test]
    fn decodes_a_token_request() {
        let type_meta = [
            field(1, b"authentication.k8s.io/v1"),
            field(2, b"TokenRequest"),
        ]
        .concat();
        // expirationSeconds (field 4, varint 3600 = 0x90 0x1c).
        let spec = [field(1, b"porch"), vec![0x20, 0x90, 0x1c]].concat();
        let raw = [field(1, &field(1, b"ci")), field(2, &spec)].concat();
        let body = [b"k8s\x00".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let obj = decode_core(&body).expect("decode");
        assert_eq!(obj["kind"], "TokenRequest");
        assert_eq!(obj["spec"]["audiences"], json!(["porch"]));
        assert_eq!(obj["spec"]["expirationSeconds"], 3600);
    }

    #[test]
    fn decodes_a_config_map() {
        let meta = [field(1, b"cm"), field(3, b"ns")].concat();
        let entry = [field(1, b"key"), field(2, b"value")].concat();
        let bin = [field(1, b"blob"), field(2, &[0, 1])].concat();
        let cm = [field(1, &meta), field(2, &entry), field(3, &bin)].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let body = [MAGIC.to_vec(), field(1, &type_meta), field(2, &cm)].concat();
        let v = decode_core(&body).expect("decodes");
        assert_eq!(v["metadata"]["name"], "cm");
        assert_eq!(v["data"]["key"], "value");
        assert_eq!(v["binaryData"]["blob"], "AAE=");
    }
}
