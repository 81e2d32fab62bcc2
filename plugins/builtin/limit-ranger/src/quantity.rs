//! Kubernetes resource quantities ("100m", "1.5Gi", "2e3", "64Mi") as
//! milli-units, the precision kube's LimitRanger compares at (parsing is the
//! quota library's).

/// A quantity as written, with its value in milli-units (rounded up, as
/// `resource.Quantity.MilliValue` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    pub text: String,
    pub milli: i128,
}

impl Quantity {
    /// Parses a quantity; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Quantity> {
        let milli = milli_value(text.trim())?;
        Some(Quantity {
            text: text.trim().to_string(),
            milli,
        })
    }

    /// Builds a quantity from milli-units (used for sums), written canonically.
    pub fn from_milli(milli: i128) -> Quantity {
        let text = if milli % 1000 == 0 {
            (milli / 1000).to_string()
        } else {
            format!("{milli}m")
        };
        Quantity { text, milli }
    }
}

/// `resource.Quantity.MilliValue` of `text`, parsed by the shared quota library.
fn milli_value(text: &str) -> Option<i128> {
    capstan_quota::Quantity::parse(text)
        .ok()
        .map(|q| q.milli_value())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(text: &str) -> i128 {
        Quantity::parse(text).unwrap().milli
    }

    #[test]
    fn parses_kubernetes_quantities() {
        assert_eq!(m("100m"), 100);
        assert_eq!(m("1"), 1000);
        assert_eq!(m("0.5"), 500);
        assert_eq!(m("1.5Gi"), 1536 * 1024 * 1024 * 1000);
        assert_eq!(m("64Mi"), 64 * 1024 * 1024 * 1000);
        assert_eq!(m("2k"), 2_000_000);
        assert_eq!(m("1e3"), 1_000_000);
        assert_eq!(m("1n"), 1, "rounded up to one milli");
        assert_eq!(m("-2"), -2000);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1.2.3", "5Xi", "."] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }
}
