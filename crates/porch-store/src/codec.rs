//! Byte layouts of the redb tables.
//!
//! * objects: key `resource \0 namespace \0 name` (so one resource, or one namespace of it, is a
//!   contiguous key range), value `rv (u64 LE) ++ JSON`.
//! * events: key rv, value `type (u8) ++ 3 × (u16 LE len ++ bytes) ++ previous ++ JSON`, where
//!   `previous` is `u32 LE len ++ bytes` of the object before the write (`u32::MAX`: none), so
//!   a watch replayed from the log applies selectors exactly as a live one does.
//! * meta: `rv` (last committed resourceVersion), `compacted` (events up to it were dropped).

use std::sync::Arc;

use porch_core::store::{EventType, ObjectKey, StoreError, StoreEvent, StoredObject};
use redb::TableDefinition;

pub(crate) const OBJECTS: TableDefinition<&str, &[u8]> = TableDefinition::new("objects");
pub(crate) const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("events");
pub(crate) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
pub(crate) const META_RV: &str = "rv";
pub(crate) const META_COMPACTED: &str = "compacted";

const SEP: char = '\0';

pub(crate) fn object_key(key: &ObjectKey) -> String {
    let mut s =
        String::with_capacity(key.resource.len() + key.namespace.len() + key.name.len() + 2);
    s.push_str(&key.resource);
    s.push(SEP);
    s.push_str(&key.namespace);
    s.push(SEP);
    s.push_str(&key.name);
    s
}

/// The half-open key range `[start, end)` holding one resource, or one namespace of it.
pub(crate) fn prefix_range(resource: &str, namespace: Option<&str>) -> (String, String) {
    let prefix = match namespace {
        Some(ns) => format!("{resource}{SEP}{ns}{SEP}"),
        None => format!("{resource}{SEP}"),
    };
    // '\u{1}' sorts right after the separator, so `prefix[..-1] + \u{1}` bounds the range.
    let mut end = prefix.clone();
    end.pop();
    end.push('\u{1}');
    (prefix, end)
}

pub(crate) fn parse_object_key(raw: &str) -> Result<ObjectKey, StoreError> {
    let mut parts = raw.splitn(3, SEP);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(r), Some(ns), Some(n)) => Ok(ObjectKey::new(r, ns, n)),
        _ => Err(StoreError::Internal(format!("corrupt object key {raw:?}"))),
    }
}

pub(crate) fn encode_object(rv: u64, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + data.len());
    v.extend_from_slice(&rv.to_le_bytes());
    v.extend_from_slice(data);
    v
}

pub(crate) fn decode_object(key: ObjectKey, raw: &[u8]) -> Result<StoredObject, StoreError> {
    let (rv, data) = split_rv(raw)?;
    Ok(StoredObject {
        key,
        resource_version: rv,
        data: Arc::from(data),
    })
}

pub(crate) fn split_rv(raw: &[u8]) -> Result<(u64, &[u8]), StoreError> {
    if raw.len() < 8 {
        return Err(StoreError::Internal("corrupt object value".into()));
    }
    let (head, data) = raw.split_at(8);
    let mut b = [0u8; 8];
    b.copy_from_slice(head);
    Ok((u64::from_le_bytes(b), data))
}

fn event_code(t: EventType) -> u8 {
    match t {
        EventType::Added => 1,
        EventType::Modified => 2,
        EventType::Deleted => 3,
    }
}

pub(crate) fn encode_event(ev: &StoreEvent) -> Vec<u8> {
    let k = &ev.object.key;
    let mut v = Vec::with_capacity(
        7 + k.resource.len() + k.namespace.len() + k.name.len() + ev.object.data.len(),
    );
    v.push(event_code(ev.event_type));
    for part in [&k.resource, &k.namespace, &k.name] {
        // Names are at most 253 bytes and resources short: u16 always fits.
        let len = u16::try_from(part.len()).unwrap_or(u16::MAX);
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(&part.as_bytes()[..usize::from(len)]);
    }
    match &ev.previous {
        Some(p) => {
            let len = u32::try_from(p.len()).unwrap_or(u32::MAX - 1);
            v.extend_from_slice(&len.to_le_bytes());
            v.extend_from_slice(&p[..usize::try_from(len).unwrap_or(0)]);
        }
        None => v.extend_from_slice(&u32::MAX.to_le_bytes()),
    }
    v.extend_from_slice(&ev.object.data);
    v
}

pub(crate) fn decode_event(rv: u64, raw: &[u8]) -> Result<StoreEvent, StoreError> {
    let corrupt = || StoreError::Internal(format!("corrupt event {rv}"));
    let (&code, mut rest) = raw.split_first().ok_or_else(corrupt)?;
    let event_type = match code {
        1 => EventType::Added,
        2 => EventType::Modified,
        3 => EventType::Deleted,
        _ => return Err(corrupt()),
    };
    let mut parts: [String; 3] = Default::default();
    for part in &mut parts {
        if rest.len() < 2 {
            return Err(corrupt());
        }
        let len = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        rest = &rest[2..];
        if rest.len() < len {
            return Err(corrupt());
        }
        *part = String::from_utf8(rest[..len].to_vec()).map_err(|_| corrupt())?;
        rest = &rest[len..];
    }
    let [resource, namespace, name] = parts;
    if rest.len() < 4 {
        return Err(corrupt());
    }
    let plen = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    rest = &rest[4..];
    let previous = if plen == u32::MAX {
        None
    } else {
        let plen = usize::try_from(plen).map_err(|_| corrupt())?;
        if rest.len() < plen {
            return Err(corrupt());
        }
        let p: Arc<[u8]> = Arc::from(&rest[..plen]);
        rest = &rest[plen..];
        Some(p)
    };
    Ok(StoreEvent {
        event_type,
        object: StoredObject {
            key: ObjectKey {
                resource,
                namespace,
                name,
            },
            resource_version: rv,
            data: Arc::from(rest),
        },
        previous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_round_trip() {
        let ev = StoreEvent {
            event_type: EventType::Deleted,
            object: StoredObject {
                key: ObjectKey::new("g/r", "ns", "n"),
                resource_version: 7,
                data: Arc::from(&b"{}"[..]),
            },
            previous: Some(Arc::from(&b"{\"a\":1}"[..])),
        };
        let back = decode_event(7, &encode_event(&ev)).expect("decodes");
        assert_eq!(back.previous.as_deref(), Some(&b"{\"a\":1}"[..]));
        assert_eq!(back.event_type, EventType::Deleted);
        assert_eq!(back.object.key, ev.object.key);
        assert_eq!(&*back.object.data, b"{}");
    }

    #[test]
    fn prefix_range_bounds_one_namespace() {
        let (a, b) = prefix_range("g/r", Some("ns"));
        let inside = object_key(&ObjectKey::new("g/r", "ns", "zzz"));
        let other = object_key(&ObjectKey::new("g/r", "ns2", "a"));
        assert!(a.as_str() <= inside.as_str() && inside.as_str() < b.as_str());
        assert!(!(a.as_str() <= other.as_str() && other.as_str() < b.as_str()));
    }
}
