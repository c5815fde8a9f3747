//! Flag values as upstream's `pflag.Value.Set` (or Go's `flag` package, for klog's flags)
//! parses them, one clap value parser each. A refused value leaves pflag's message
//! (`invalid argument "v" for "--flag" flag: <why>`) for [`take_flag_error`], since
//! clap's error carries no text of ours.

use std::cell::RefCell;
use std::ffi::OsStr;

use clap::builder::TypedValueParser;
use clap::error::ErrorKind;
use clap::{Arg, Command};

use super::{flag_name, go_quote};
use kpt::gostrconv;

/// A unit value parser `$name` for `$ty` whose `Set` is `$parse`: `Ok` or the reason
/// pflag's message gives after `flag: `.
macro_rules! flag_value {
    ($(#[$doc:meta])* $name:ident -> $ty:ty, $parse:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name;

        impl TypedValueParser for $name {
            type Value = $ty;

            fn parse_ref(
                &self,
                _cmd: &Command,
                arg: Option<&Arg>,
                value: &OsStr,
            ) -> Result<$ty, clap::Error> {
                let s = value.to_string_lossy();
                let parse: fn(&str) -> Result<$ty, String> = $parse;
                parse(&s).map_err(|why| refuse(arg, &s, why))
            }
        }
    };
}

// The pflag message of the last value a parser below refused. clap's own error for a
// refused value carries no custom text that can be read back, so the parser leaves it
// here for [`report`] (per thread: one command line is read on one thread).
thread_local! {
    static FLAG_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn refuse(arg: Option<&Arg>, value: &str, why: String) -> clap::Error {
    let message = format!(
        "invalid argument {} for {} flag: {why}",
        go_quote(value),
        go_quote(&flag_name(arg))
    );
    FLAG_ERROR.with(|slot| *slot.borrow_mut() = Some(message));
    clap::Error::new(ErrorKind::ValueValidation)
}

/// strconv.ParseBool.
pub fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

flag_value!(
    /// A boolean flag value, as pflag's `boolValue.Set`.
    GoBool -> bool,
    |s| parse_go_bool(s)
        .ok_or_else(|| format!("strconv.ParseBool: parsing {}: invalid syntax", go_quote(s)))
);

/// An integer flag value, as pflag's `int64Value.Set` / `int32Value.Set`
/// (`strconv.ParseInt(s, 0, <bits of T>)`).
#[derive(Clone, Debug)]
pub struct GoInt<T>(std::marker::PhantomData<T>);

impl<T> GoInt<T> {
    pub const fn new() -> Self {
        GoInt(std::marker::PhantomData)
    }
}

impl<T> TypedValueParser for GoInt<T>
where
    T: TryFrom<i64> + Clone + Send + Sync + 'static,
{
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let s = value.to_string_lossy();
        let bits = u32::try_from(std::mem::size_of::<T>() * 8).unwrap_or(64);
        let n = gostrconv::parse_int(&s, 0, bits).map_err(|e| refuse(arg, &s, e.to_string()))?;
        T::try_from(n).map_err(|_| refuse(arg, &s, "value out of range".into()))
    }
}

flag_value!(
    /// An unsigned flag value, as pflag's `uint64Value.Set` (`strconv.ParseUint(s, 0, 64)`).
    GoUint -> u64,
    |s| gostrconv::parse_uint(s, 0, 64).map_err(|e| e.to_string())
);

/// A boolean of Go's `flag` package (klog's flags, added to pflag from Go's flag set):
/// its `Set` says only `parse error`.
/// (The value is accepted and ignored, as every logging flag here.)
#[derive(Clone, Copy, Debug, Default)]
pub struct FlagBool;

flag_value!(
    GoFlagBool -> FlagBool,
    |s| parse_go_bool(s).map(|_| FlagBool).ok_or_else(|| "parse error".to_string())
);

flag_value!(
    /// A `uint64` of Go's `flag` package: `strconv.ParseUint(s, 0, 64)`, its errors reduced
    /// to `parse error` and `value out of range`.
    GoFlagUint64 -> u64,
    |s| gostrconv::parse_uint(s, 0, 64).map_err(|e| match e.kind {
        gostrconv::NumErrorKind::Syntax => "parse error".to_string(),
        gostrconv::NumErrorKind::Range => "value out of range".to_string(),
    })
);

/// klog's string values (`severityValue`, `moduleSpec`, `traceLocation`): their `Set`
/// checks and texts.
#[derive(Clone, Copy, Debug)]
pub enum Klog {
    Severity,
    ModuleSpec,
    TraceLocation,
}

impl Klog {
    fn check(self, s: &str) -> Result<(), String> {
        let level = |s: &str| gostrconv::parse_int(s, 10, 32);
        match self {
            Klog::Severity => {
                if ["INFO", "WARNING", "ERROR", "FATAL"].contains(&s.to_uppercase().as_str()) {
                    return Ok(());
                }
                level(s).map(|_| ()).map_err(|e| e.to_string())
            }
            Klog::ModuleSpec => {
                const SYNTAX: &str = "syntax error: expect comma-separated list of filename=N";
                for pat in s.split(',').filter(|p| !p.is_empty()) {
                    let parts: Vec<&str> = pat.split('=').collect();
                    let [pattern, lv] = parts.as_slice() else {
                        return Err(SYNTAX.into());
                    };
                    if pattern.is_empty() || lv.is_empty() {
                        return Err(SYNTAX.into());
                    }
                    match level(lv) {
                        Err(_) => return Err(SYNTAX.into()),
                        Ok(v) if v < 0 => return Err("negative value for vmodule level".into()),
                        Ok(_) => {}
                    }
                }
                Ok(())
            }
            Klog::TraceLocation => {
                const SYNTAX: &str = "syntax error: expect file.go:234";
                if s.is_empty() {
                    return Ok(());
                }
                let fields: Vec<&str> = s.split(':').collect();
                let [file, line] = fields.as_slice() else {
                    return Err(SYNTAX.into());
                };
                if !file.contains('.') {
                    return Err(SYNTAX.into());
                }
                match gostrconv::parse_int(line, 10, 64) {
                    Err(_) => Err(SYNTAX.into()),
                    Ok(v) if v <= 0 => Err("negative or zero value for level".into()),
                    Ok(_) => Ok(()),
                }
            }
        }
    }
}

flag_value!(
    /// klog's `-v` (`Level.Set`: `strconv.ParseInt(s, 10, 32)`).
    KlogLevel -> i32,
    |s| gostrconv::parse_int(s, 10, 32)
        .map_err(|e| e.to_string())
        .and_then(|n| i32::try_from(n).map_err(|_| "value out of range".to_string()))
);

impl TypedValueParser for Klog {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let s = value.to_string_lossy();
        self.check(&s).map_err(|why| refuse(arg, &s, why))?;
        Ok(s.into_owned())
    }
}

flag_value!(
    /// A duration flag value, as pflag's `durationValue.Set` (Go's `time.ParseDuration`).
    GoDuration -> std::time::Duration,
    |s| crate::go_duration::parse(s).map(|nanos| {
        // A negative duration waits no time at all.
        std::time::Duration::from_nanos(u64::try_from(nanos).unwrap_or_default())
    })
);

/// kpt's `--image-pull-policy`: at kpt HEAD a pflag value (`fnruntime.ImagePullPolicy`,
/// case-insensitive) whose `Set` refuses in its own words, typo included.
#[derive(Clone, Debug)]
pub struct KptPullPolicy;

impl TypedValueParser for KptPullPolicy {
    type Value = fn_container::PullPolicy;

    fn parse_ref(
        &self,
        _cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<fn_container::PullPolicy, clap::Error> {
        let s = value.to_string_lossy();
        s.parse().map_err(|_| {
            refuse(
                arg,
                &s,
                "must must be one of Always, IfNotPresent, Never".into(),
            )
        })
    }
}

/// The pflag message a value parser of this module left for the value it refused last.
pub fn take_flag_error() -> Option<String> {
    FLAG_ERROR.with(|slot| slot.borrow_mut().take())
}

/// The elements one occurrence of a string-slice flag adds (see [`GoCsv`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsvElements(pub Vec<String>);

flag_value!(
    /// A string-slice flag value, as pflag's `stringSliceValue.Set`: the value read as one CSV
    /// record (`crate::go_csv`), each occurrence adding its elements.
    GoCsv -> CsvElements,
    |s| crate::go_csv::read_as_csv(s).map(CsvElements)
);

/// All elements of a string-slice flag's occurrences, in order.
pub fn csv_elements(values: &[CsvElements]) -> Vec<String> {
    values.iter().flat_map(|v| v.0.iter().cloned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn klog_values() {
        assert_eq!(Klog::Severity.check("warning"), Ok(()));
        assert_eq!(Klog::Severity.check("2"), Ok(()));
        assert!(Klog::Severity.check("loud").is_err());
        assert_eq!(Klog::ModuleSpec.check("a=1,,b*=2"), Ok(()));
        assert_eq!(
            Klog::ModuleSpec.check("a=-1"),
            Err("negative value for vmodule level".into())
        );
        assert!(Klog::ModuleSpec.check("a").is_err());
        assert_eq!(Klog::TraceLocation.check(""), Ok(()));
        assert_eq!(Klog::TraceLocation.check("main.go:12"), Ok(()));
        assert_eq!(
            Klog::TraceLocation.check("main.go:0"),
            Err("negative or zero value for level".into())
        );
        assert_eq!(
            Klog::TraceLocation.check("main:12"),
            Err("syntax error: expect file.go:234".into())
        );
    }
}
