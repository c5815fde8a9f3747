//! The values a template works on, as Go's `reflect.Value` holds them for the data kubectl
//! gives its printer (`map[string]interface{}` decoded with integers as `int64` and other
//! numbers as `float64`) and for literals and function results.

use serde_json::{Map, Value};

/// A value during execution.
#[derive(Debug, Clone)]
pub(super) enum Val<'a> {
    /// reflect's zero `Value`: a missing map key, a pipeline that produced nothing.
    Invalid,
    /// A nil `interface{}`: JSON null read out of a map or slice, or `nil` passed as `any`.
    Nil,
    /// A value of the data; `boxed` while its static type is still `interface {}` (read
    /// out of a map or slice, not yet unwrapped by a pipeline).
    Data(&'a Value, bool),
    /// Part of a data array (`slice`'s result).
    Slice(&'a [Value]),
    /// Go `int`: integer literals, `len`, range indexes.
    Int(i64),
    /// Go `uint8`: a byte of a string (`index "abc" 1`).
    Byte(u8),
    /// Go `float64` literal.
    Float(f64),
    Str(String),
    Bool(bool),
}

/// Go's integer types the engine meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntTy {
    Int,
    Int64,
    Uint8,
}

/// The concrete value inside a [`Val`] (Go's `indirectInterface`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Conc<'v> {
    /// No value: [`Val::Invalid`] or a nil interface.
    Invalid,
    Map(&'v Map<String, Value>),
    Slice(&'v [Value]),
    Str(&'v str),
    Int(i64, IntTy),
    Float(f64),
    Bool(bool),
}

impl<'a> Val<'a> {
    /// An element read out of a map or slice: `interface {}`-typed, nil for JSON null.
    pub fn elem(v: &'a Value) -> Self {
        if v.is_null() {
            Val::Nil
        } else {
            Val::Data(v, true)
        }
    }

    /// What a pipeline does to its result: an `interface {}` is replaced by what it holds.
    pub fn unboxed(self) -> Self {
        match self {
            Val::Nil => Val::Invalid,
            Val::Data(v, true) => Val::Data(v, false),
            other => other,
        }
    }

    /// The array this is (or holds), borrowed from the data.
    pub fn array(&self) -> Option<&'a [Value]> {
        match self {
            Val::Data(Value::Array(a), _) => Some(a),
            Val::Slice(s) => Some(s),
            _ => None,
        }
    }

    /// The object this is (or holds), borrowed from the data.
    pub fn object(&self) -> Option<&'a Map<String, Value>> {
        match self {
            Val::Data(Value::Object(m), _) => Some(m),
            _ => None,
        }
    }

    pub fn conc(&self) -> Conc<'_> {
        match self {
            Val::Invalid | Val::Nil => Conc::Invalid,
            Val::Data(v, _) => match v {
                Value::Null => Conc::Invalid,
                Value::Bool(b) => Conc::Bool(*b),
                Value::Number(n) => match n.as_i64() {
                    Some(i) => Conc::Int(i, IntTy::Int64),
                    None => Conc::Float(n.as_f64().unwrap_or(0.0)),
                },
                Value::String(s) => Conc::Str(s),
                Value::Array(a) => Conc::Slice(a),
                Value::Object(m) => Conc::Map(m),
            },
            Val::Slice(s) => Conc::Slice(s),
            Val::Int(i) => Conc::Int(*i, IntTy::Int),
            Val::Byte(b) => Conc::Int(i64::from(*b), IntTy::Uint8),
            Val::Float(f) => Conc::Float(*f),
            Val::Str(s) => Conc::Str(s),
            Val::Bool(b) => Conc::Bool(*b),
        }
    }

    /// The static type Go names in field errors: `interface {}` until unwrapped.
    pub fn static_type(&self) -> &'static str {
        match self {
            Val::Nil | Val::Data(_, true) => "interface {}",
            other => other.conc().type_name(),
        }
    }

    /// Go's `isTrue` of the concrete value: false, 0, nil and empty are false.
    pub fn truth(&self) -> bool {
        match self.conc() {
            Conc::Invalid => false,
            Conc::Map(m) => !m.is_empty(),
            Conc::Slice(s) => !s.is_empty(),
            Conc::Str(s) => !s.is_empty(),
            Conc::Int(i, _) => i != 0,
            Conc::Float(f) => f != 0.0,
            Conc::Bool(b) => b,
        }
    }
}

impl Conc<'_> {
    /// Go's name of the concrete type (`<nil>` for no value, as `%T` prints it).
    pub fn type_name(&self) -> &'static str {
        match self {
            Conc::Invalid => "<nil>",
            Conc::Map(_) => "map[string]interface {}",
            Conc::Slice(_) => "[]interface {}",
            Conc::Str(_) => "string",
            Conc::Int(_, IntTy::Int) => "int",
            Conc::Int(_, IntTy::Int64) => "int64",
            Conc::Int(_, IntTy::Uint8) => "uint8",
            Conc::Float(_) => "float64",
            Conc::Bool(_) => "bool",
        }
    }
}
