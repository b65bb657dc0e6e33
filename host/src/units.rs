//! How toolhost writes sizes, durations and counts for people: the one
//! place for each form, so a limit reads the same in a refusal, a listing
//! and a session's summary. A leaf: it imports nothing of toolhost's.

use std::time::Duration;

/// A size as a limit names it: `4 MiB`, `64 KiB`, or `1000 bytes` when it is
/// not a whole number of either.
pub(crate) fn bytes(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const KIB: u64 = 1 << 10;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A size the user set in MiB: `512 MiB`, `2 GiB` (a part of a MiB counts
/// as one).
pub(crate) fn mib_or_gib(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    }
}

/// A time limit: `30 s`, or `1500 ms` when not whole seconds.
pub(crate) fn limit_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Fuel as a limit names it: `10 G`, `500 M`, `1000`.
pub(crate) fn fuel(units: u64) -> String {
    const G: u64 = 1_000_000_000;
    const M: u64 = 1_000_000;
    if units >= G && units.is_multiple_of(G) {
        format!("{} G", units / G)
    } else if units >= M && units.is_multiple_of(M) {
        format!("{} M", units / M)
    } else {
        units.to_string()
    }
}

/// A tool's limits, written one way everywhere they are listed:
/// `10 G fuel, 30 s, 256 MiB memory, 1 MiB output, 256 MiB writes`.
pub(crate) fn tool_limits(
    fuel_units: u64,
    timeout: Duration,
    memory: u64,
    output: u64,
    writes: u64,
) -> String {
    format!(
        "{} fuel, {}, {} memory, {} output, {} writes",
        fuel(fuel_units),
        limit_duration(timeout),
        bytes(memory),
        bytes(output),
        bytes(writes)
    )
}

/// A measured time in a dense line: `812ms`, `1.2s`.
pub(crate) fn short_duration_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// A large count in a dense line: `999`, `2.1M`.
pub(crate) fn short_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1}M", n as f64 / 1e6),
        _ => format!("{:.1}G", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_reads_as_documented() {
        assert_eq!(bytes(4 << 20), "4 MiB");
        assert_eq!(bytes(64 << 10), "64 KiB");
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(bytes((1 << 20) + 1024), "1025 KiB");
        assert_eq!(fuel(10_000_000_000), "10 G");
        assert_eq!(fuel(500_000_000), "500 M");
        assert_eq!(fuel(1234), "1234");
        assert_eq!(
            tool_limits(
                10_000_000_000,
                Duration::from_secs(30),
                256 << 20,
                1 << 20,
                256 << 20
            ),
            "10 G fuel, 30 s, 256 MiB memory, 1 MiB output, 256 MiB writes"
        );
        assert_eq!(mib_or_gib(2 << 30), "2 GiB");
        assert_eq!(mib_or_gib(512 << 20), "512 MiB");
        assert_eq!(mib_or_gib(1), "1 MiB");
        assert_eq!(limit_duration(Duration::from_secs(30)), "30 s");
        assert_eq!(limit_duration(Duration::from_millis(1500)), "1500 ms");
        assert_eq!(short_duration_ms(812), "812ms");
        assert_eq!(short_duration_ms(3), "3ms");
        assert_eq!(short_duration_ms(1234), "1.2s");
        assert_eq!(short_count(2_100_000), "2.1M");
        assert_eq!(short_count(999), "999");
    }
}
