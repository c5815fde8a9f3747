//! `repo reg --sync-schedule` is checked as upstream checks it: robfig/cron's
//! `ParseStandard` (five fields or a `@` descriptor, an optional `TZ=`/`CRON_TZ=` zone),
//! with that parser's error texts.

/// A field's bounds and, for months and weekdays, its names (lower case, by value).
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MONTHS: &[(&str, u64)] = &[
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("may", 5),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];
const DAYS: &[(&str, u64)] = &[
    ("sun", 0),
    ("mon", 1),
    ("tue", 2),
    ("wed", 3),
    ("thu", 4),
    ("fri", 5),
    ("sat", 6),
];

const FIELDS: [Bounds; 5] = [
    Bounds {
        min: 0,
        max: 59,
        names: &[],
    },
    Bounds {
        min: 0,
        max: 23,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 31,
        names: &[],
    },
    Bounds {
        min: 1,
        max: 12,
        names: MONTHS,
    },
    Bounds {
        min: 0,
        max: 6,
        names: DAYS,
    },
];

/// `cron.ParseStandard(spec)`'s verdict: `Err` carries robfig's message.
pub fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // robfig takes the zone up to the first space (there must be one).
        let (Some(eq), Some(space)) = (spec.find('='), spec.find(' ')) else {
            return Err(format!("provided bad location {spec}"));
        };
        let zone = spec.get(eq + 1..space).unwrap_or_default();
        if !known_zone(zone) {
            return Err(format!(
                "provided bad location {zone}: unknown time zone {zone}"
            ));
        }
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != FIELDS.len() {
        return Err(format!(
            "expected exactly {} fields, found {}: [{}]",
            FIELDS.len(),
            fields.len(),
            fields.join(" ")
        ));
    }
    for (field, bounds) in fields.iter().zip(&FIELDS) {
        // strings.FieldsFunc: empty parts between commas are skipped.
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            range(expr, bounds)?;
        }
    }
    Ok(())
}

fn descriptor(spec: &str) -> Result<(), String> {
    match spec {
        "@yearly" | "@annually" | "@monthly" | "@weekly" | "@daily" | "@midnight" | "@hourly" => {
            Ok(())
        }
        _ => match spec.strip_prefix("@every ") {
            Some(d) => crate::go_duration::parse(d)
                .map(|_| ())
                .map_err(|e| format!("failed to parse duration {spec}: {e}")),
            None => Err(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// robfig's getRange: `*`/`?`, `v` or `v-v`, then an optional `/step` (`v/step` runs to
/// the field's maximum).
fn range(expr: &str, b: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (b.min, b.max)
    } else {
        let start = int_or_name(low_and_high[0], b)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], b)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = b.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

fn int_or_name(expr: &str, b: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match b.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => int(expr),
    }
}

/// robfig's mustParseInt over Go's `strconv.Atoi`.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        ));
    }
    let n: i64 = match expr.parse() {
        Ok(n) => n,
        Err(_) => {
            return Err(format!(
                "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
            ));
        }
    };
    if n < 0 {
        return Err(format!("negative number ({n}) not allowed: {expr}"));
    }
    Ok(n.unsigned_abs())
}

/// Go's `time.LoadLocation` for the names it always knows and the system's zone files.
fn known_zone(zone: &str) -> bool {
    if zone.is_empty() || zone == "UTC" || zone == "Local" {
        return true;
    }
    !zone.contains("..")
        && [
            "/usr/share/zoneinfo/",
            "/usr/share/lib/zoneinfo/",
            "/usr/lib/locale/TZ/",
            "/etc/zoneinfo/",
        ]
        .iter()
        .any(|dir| std::path::Path::new(dir).join(zone).is_file())
}

#[cfg(test)]
mod tests {
    use super::parse_standard as p;

    #[test]
    fn accepted_schedules() {
        for spec in [
            "*/10 * * * *",
            "15 4 1-15/2 jan,Jul mon-FRI",
            "0 0 ? * 0",
            "5/20 * * * *",
            "@hourly",
            "@every 90s",
            "TZ=UTC 0 3 * * *",
            "1,,2 * * * *",
        ] {
            assert_eq!(p(spec), Ok(()), "{spec}");
        }
    }

    #[test]
    fn robfig_error_texts() {
        assert_eq!(p(""), Err("empty spec string".into()));
        assert_eq!(
            p("* * * *"),
            Err("expected exactly 5 fields, found 4: [* * * *]".into())
        );
        assert_eq!(
            p("x y z q w"),
            Err("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax".into())
        );
        assert_eq!(
            p("60 * * * *"),
            Err("end of range (60) above maximum (59): 60".into())
        );
        assert_eq!(
            p("* * 0 * *"),
            Err("beginning of range (0) below minimum (1): 0".into())
        );
        assert_eq!(
            p("5-1 * * * *"),
            Err("beginning of range (5) beyond end of range (1): 5-1".into())
        );
        assert_eq!(
            p("*/0 * * * *"),
            Err("step of range should be a positive number: */0".into())
        );
        assert_eq!(p("1-2-3 * * * *"), Err("too many hyphens: 1-2-3".into()));
        assert_eq!(p("1/2/3 * * * *"), Err("too many slashes: 1/2/3".into()));
        assert_eq!(p("@often"), Err("unrecognized descriptor: @often".into()));
        assert_eq!(
            p("@every soon"),
            Err("failed to parse duration @every soon: time: invalid duration \"soon\"".into())
        );
    }
}
