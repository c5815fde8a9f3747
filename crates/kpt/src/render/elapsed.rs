//! How long a function ran, as kpt prints it after `[PASS]`/`[FAIL]`: Go's
//! `time.Since(start).Truncate(100 * time.Millisecond)` written by `Duration.String`
//! (`0s`, `100ms`, `1.2s`, `1m0.5s`, `1h0m0s`).

use std::time::Duration;

/// `d` truncated to a tenth of a second, in Go's `Duration.String` form.
pub(crate) fn go_elapsed(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    if tenths == 0 {
        return "0s".into();
    }
    if tenths < 10 {
        return format!("{}ms", tenths * 100);
    }
    let (hours, rest) = (tenths / 36_000, tenths % 36_000);
    let (minutes, rest) = (rest / 600, rest % 600);
    let (secs, tenth) = (rest / 10, rest % 10);
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    out.push_str(&secs.to_string());
    if tenth > 0 {
        out.push_str(&format!(".{tenth}"));
    }
    out.push('s');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_go_prints_a_duration_truncated_to_100ms() {
        for (ms, want) in [
            (0, "0s"),
            (99, "0s"),
            (100, "100ms"),
            (987, "900ms"),
            (1_000, "1s"),
            (1_099, "1s"),
            (1_250, "1.2s"),
            (59_950, "59.9s"),
            (60_000, "1m0s"),
            (61_500, "1m1.5s"),
            (3_600_000, "1h0m0s"),
            (3_723_400, "1h2m3.4s"),
        ] {
            assert_eq!(go_elapsed(Duration::from_millis(ms)), want, "{ms} ms");
        }
    }
}
