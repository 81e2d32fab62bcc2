use super::*;

fn q(text: &str) -> Quantity {
    Quantity::parse(text).unwrap()
}

fn canonical(text: &str) -> String {
    q(text).to_string()
}

#[test]
fn parses_every_suffix_to_nano_units() {
    let unit = NANO;
    assert_eq!(q("1n").nanos(), 1);
    assert_eq!(q("1u").nanos(), 1_000);
    assert_eq!(q("1m").nanos(), 1_000_000);
    assert_eq!(q("1").nanos(), unit);
    assert_eq!(q("1k").nanos(), 1_000 * unit);
    assert_eq!(q("1M").nanos(), 1_000_000 * unit);
    assert_eq!(q("1G").nanos(), 10i128.pow(9) * unit);
    assert_eq!(q("1T").nanos(), 10i128.pow(12) * unit);
    assert_eq!(q("1P").nanos(), 10i128.pow(15) * unit);
    assert_eq!(q("1E").nanos(), 10i128.pow(18) * unit);
    assert_eq!(q("1Ki").nanos(), 1024 * unit);
    assert_eq!(q("1Mi").nanos(), (1 << 20) * unit);
    assert_eq!(q("1Gi").nanos(), (1 << 30) * unit);
    assert_eq!(q("1Ti").nanos(), (1i128 << 40) * unit);
    assert_eq!(q("1Pi").nanos(), (1i128 << 50) * unit);
    assert_eq!(q("1Ei").nanos(), (1i128 << 60) * unit);
}

#[test]
fn parses_decimals_exponents_and_signs() {
    assert_eq!(q("1.5").nanos(), 1_500_000_000);
    assert_eq!(q("1.5Gi").nanos(), 1536 * (1 << 20) * NANO);
    assert_eq!(q(".5").nanos(), 500_000_000);
    assert_eq!(q("5.").nanos(), 5 * NANO);
    assert_eq!(q("1e3").nanos(), 1000 * NANO);
    assert_eq!(q("1E3").nanos(), 1000 * NANO);
    assert_eq!(q("1e+3").nanos(), 1000 * NANO);
    assert_eq!(q("25e-1").nanos(), 2_500_000_000);
    assert_eq!(q("-2").nanos(), -2 * NANO);
    assert_eq!(q("+2").nanos(), 2 * NANO);
    assert_eq!(q(" 3 ").nanos(), 3 * NANO);
    assert_eq!(q("0.00000000001").nanos(), 1, "rounded up to 1n");
    assert_eq!(q("-0.00000000001").nanos(), -1, "magnitude rounded up");
    assert_eq!(q("1e3").format(), Format::DecimalExponent);
    assert_eq!(q("1Gi").format(), Format::BinarySI);
    assert_eq!(q("0.5Ki").format(), Format::BinarySI);
    assert_eq!(
        q("0.0005Ki").format(),
        Format::DecimalSI,
        "below one: decimal"
    );
    assert_eq!(q("1k").format(), Format::DecimalSI);
}

#[test]
fn rejects_garbage() {
    for bad in [
        "", "abc", "1.2.3", "5Xi", ".", "1e", "1K", "Mi", "1 Mi", "1ee3", "--1", "1e3.5", "1Mi3",
    ] {
        assert!(Quantity::parse(bad).is_err(), "{bad:?} parsed");
    }
    let err = Quantity::parse("5Xi").unwrap_err();
    assert_eq!(err.to_string(), "invalid quantity \"5Xi\": unknown suffix");
    assert!(Quantity::parse("1e100").is_err());
}

#[test]
fn formats_like_kube() {
    let cases = [
        ("1500m", "1500m"),
        ("1.5", "1500m"),
        ("0.1", "100m"),
        ("2", "2"),
        ("2000", "2k"),
        ("1000m", "1"),
        ("1024", "1024"),
        ("1Gi", "1Gi"),
        ("500Mi", "500Mi"),
        ("1.5Gi", "1536Mi"),
        ("1024Mi", "1Gi"),
        ("1025", "1025"),
        ("1.5Ki", "1536"),
        ("0.5Ki", "512"),
        ("1Ki", "1Ki"),
        ("1e3", "1e3"),
        ("1500e-3", "1500e-3"),
        ("0.0015", "1500u"),
        ("1n", "1n"),
        ("100u", "100u"),
        ("0", "0"),
        ("0Gi", "0"),
        ("-1500m", "-1500m"),
        ("-2Gi", "-2Gi"),
        ("10G", "10G"),
        ("1E", "1E"),
        ("1000E", "1000E"),
        ("1073741824", "1073741824"),
        ("5e0", "5"),
    ];
    for (input, want) in cases {
        assert_eq!(canonical(input), want, "{input}");
    }
}

#[test]
fn inexact_binary_prints_as_decimal() {
    assert_eq!(canonical("1.0001Ki"), "1024102400u");
    assert_eq!(canonical("0.5"), "500m");
}

#[test]
fn adds_and_subtracts_exactly_keeping_kube_formats() {
    assert_eq!((q("500m") + q("1")).to_string(), "1500m");
    assert_eq!((q("1Gi") + q("512Mi")).to_string(), "1536Mi");
    assert_eq!((q("1Gi") - q("1Gi")).to_string(), "0");
    assert_eq!((q("1") - q("1500m")).to_string(), "-500m");
    assert_eq!((q("100m") + q("100m") + q("100m")).to_string(), "300m");
    // A zero receiver takes the other operand's format (Quantity.Add).
    assert_eq!((Quantity::ZERO + q("2Gi")).to_string(), "2Gi");
    // Otherwise the receiver's format wins.
    assert_eq!((q("1000") + q("1Ki")).to_string(), "2024");
    assert_eq!((q("1Ki") + q("1000")).to_string(), "2024");
    assert_eq!((q("1Ki") + q("1Ki")).to_string(), "2Ki");
    assert_eq!((-q("1Gi")).to_string(), "-1Gi");
}

#[test]
fn compares_by_value_only() {
    assert_eq!(q("1Gi"), q("1073741824"));
    assert_eq!(q("1"), q("1000m"));
    assert!(q("1500m") > q("1"));
    assert!(q("1Mi") > q("1M"));
    assert!(q("999m") < q("1"));
    assert_eq!(q("2").max(q("3")).to_string(), "3");
    assert_eq!(q("2Gi").max(q("2147483648")).format(), Format::BinarySI);
}

#[test]
fn rounding_helpers() {
    assert_eq!(q("1500m").round_up_to_units().to_string(), "2");
    assert_eq!(q("2").round_up_to_units().to_string(), "2");
    assert_eq!(q("-1500m").round_up_to_units().to_string(), "-2");
    assert_eq!(q("1n").milli_value(), 1);
    assert_eq!(q("1.5").milli_value(), 1500);
    assert_eq!(q("1500m").value(), 2);
    assert_eq!(q("-1500m").value(), -2);
    assert_eq!(Quantity::from_units(3).to_string(), "3");
    assert_eq!("4Mi".parse::<Quantity>().unwrap().to_string(), "4Mi");
    assert_eq!(
        Quantity::from_nanos(3 * NANO / 2, Format::DecimalSI).to_string(),
        "1500m"
    );
}
