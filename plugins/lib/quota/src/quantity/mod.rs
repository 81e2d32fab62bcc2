//! Kubernetes resource quantities (apimachinery's `resource.Quantity`):
//! "100m", "1.5Gi", "2e3", "64Mi". A [`Quantity`] holds its value exactly in
//! nano-units (the finest precision kube keeps: parsing rounds the magnitude
//! up to 1n) together with the [`Format`] it prints in, so sums, differences
//! and comparisons are exact and the text comes back the way kube writes it.

mod format;
mod parse;

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, Neg, Sub};
use std::str::FromStr;

pub use parse::ParseQuantityError;

/// Nano-units in one unit.
pub(crate) const NANO: i128 = 1_000_000_000;

/// How a quantity is printed, as apimachinery's `resource.Format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Decimal SI suffixes: "1500m", "2k", "5".
    #[default]
    DecimalSI,
    /// Binary SI suffixes when exact: "1Gi", "1536Mi".
    BinarySI,
    /// Decimal exponents: "1e3".
    DecimalExponent,
}

/// An exact quantity. Equality and ordering compare values only (as
/// `Quantity.Cmp` does): `"1Gi" == "1073741824"`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quantity {
    nanos: i128,
    format: Format,
}

impl Quantity {
    /// Zero, printed "0".
    pub const ZERO: Quantity = Quantity {
        nanos: 0,
        format: Format::DecimalSI,
    };

    /// Parses kube's quantity syntax (see [`parse`](Self::parse) errors).
    pub fn parse(text: &str) -> Result<Quantity, ParseQuantityError> {
        parse::parse(text)
    }

    /// A whole number of units, in `DecimalSI` (`resource.NewQuantity(n, DecimalSI)`).
    pub fn from_units(units: i64) -> Quantity {
        Quantity {
            nanos: i128::from(units) * NANO,
            format: Format::DecimalSI,
        }
    }

    /// A value in nano-units with the format to print it in.
    pub fn from_nanos(nanos: i128, format: Format) -> Quantity {
        Quantity { nanos, format }
    }

    /// The exact value in nano-units.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// The value in milli-units, rounded away from zero (`MilliValue`).
    pub fn milli_value(&self) -> i128 {
        div_away_from_zero(self.nanos, 1_000_000)
    }

    /// The value in units, rounded away from zero (`Value`).
    pub fn value(&self) -> i128 {
        div_away_from_zero(self.nanos, NANO)
    }

    /// The format this quantity prints in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// True when the value is zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// True when the value is below zero.
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// The value rounded to whole units, away from zero (`RoundUp(0)`).
    pub fn round_up_to_units(&self) -> Quantity {
        let rem = self.nanos % NANO;
        if rem == 0 {
            return *self;
        }
        let toward_zero = self.nanos - rem;
        let nanos = toward_zero.saturating_add(NANO * self.nanos.signum());
        Quantity { nanos, ..*self }
    }

    /// The larger of two quantities (the first one when equal).
    pub fn max(self, other: Quantity) -> Quantity {
        if other > self {
            other
        } else {
            self
        }
    }

    /// kube's arithmetic keeps the receiver's format unless it is zero, in
    /// which case the result takes the other operand's format.
    fn combine(self, other: Quantity, nanos: i128) -> Quantity {
        let format = if self.is_zero() {
            other.format
        } else {
            self.format
        };
        Quantity { nanos, format }
    }
}

/// Division of `n` by positive `d`, rounded away from zero.
fn div_away_from_zero(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else {
        q + n.signum()
    }
}

impl Add for Quantity {
    type Output = Quantity;
    /// Sum (saturating at the i128 nano-unit bounds).
    fn add(self, other: Quantity) -> Quantity {
        self.combine(other, self.nanos.saturating_add(other.nanos))
    }
}

impl Sub for Quantity {
    type Output = Quantity;
    /// Difference (saturating at the i128 nano-unit bounds).
    fn sub(self, other: Quantity) -> Quantity {
        self.combine(other, self.nanos.saturating_sub(other.nanos))
    }
}

impl Neg for Quantity {
    type Output = Quantity;
    fn neg(self) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_neg(),
            ..self
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    fn cmp(&self, other: &Quantity) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl FromStr for Quantity {
    type Err = ParseQuantityError;
    fn from_str(text: &str) -> Result<Quantity, ParseQuantityError> {
        parse::parse(text)
    }
}

impl fmt::Display for Quantity {
    /// kube's canonical text (`Quantity.String()`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format::canonical(self.nanos, self.format))
    }
}

#[cfg(test)]
mod tests;
